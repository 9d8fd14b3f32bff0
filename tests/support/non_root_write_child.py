"""Run by ``tests/sandbox/test_read_only_root.py`` as an ordinary user: model code in a sandbox writes 8 MB files
everywhere it can think of; prints, as JSON, how many bytes each place took and the error that stopped it."""

from __future__ import annotations

import json
import os
import sys

from ark.sandbox import CodeSandbox, SandboxLimits

WRITE = r"""
import json, os
CHUNK = b"x" * (1 << 20)
report = {}
for folder in json.loads(%r):
    written, error = 0, None
    for k in range(12):  # up to 96 MB a place: past /tmp's 32 MB
        try:
            with open(os.path.join(folder, f"ark-fill-{k}.bin"), "wb") as handle:
                for _ in range(8):
                    handle.write(CHUNK)
                    handle.flush()
                    written += len(CHUNK)
        except OSError as exc:
            error = os.strerror(exc.errno) if exc.errno else str(exc)
            break
    report[folder] = {"written_mb": written >> 20, "error": error}
print(json.dumps(report))
"""


def main() -> None:
    folders = json.loads(sys.argv[1])
    limits = SandboxLimits(tmp_size_mb=32, file_size_mb=16, timeout_s=60)
    with CodeSandbox(limits=limits) as sandbox:
        result = sandbox.run(WRITE % json.dumps(folders))
    print(json.dumps({"uid": os.getuid(), "error": result.error, "stdout": result.stdout}))


if __name__ == "__main__":
    main()
