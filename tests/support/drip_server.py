"""A loopback HTTP server that answers 200 with a long ``Content-Length`` and then drips its body one byte every
few seconds, like a stalled proxy: no single read ever times out, so only a deadline over the whole request ends it.
Used by the model-client tests and ``benchmarks/fault_cases_harden.py``."""

from __future__ import annotations

import socket
import threading
import time


class DripServer:
    """A loopback HTTP server that answers 200 with a long Content-Length, then sends one byte every ``every_s``
    seconds (for at most ``for_s``), like a stalled proxy."""

    def __init__(self, every_s: float = 2.0, for_s: float = 30.0) -> None:
        self.every_s, self.for_s = every_s, for_s
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)

    def serve(self) -> None:
        self.listener.settimeout(0.2)
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self.drip, args=(connection,), daemon=True).start()

    def drip(self, connection: socket.socket) -> None:
        with connection:
            connection.recv(65536)  # the request (small enough for one read on loopback)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
            deadline = time.monotonic() + self.for_s
            try:
                while time.monotonic() < deadline and not self.stop.is_set():
                    connection.sendall(b" ")
                    self.stop.wait(self.every_s)
            except OSError:  # the client gave up
                return

    def __enter__(self) -> DripServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.listener.close()
