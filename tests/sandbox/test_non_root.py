"""The sandbox run by an ordinary user: model-written code (sent by the scripted chat server) hunts for the user's
secrets, and no canary planted in the home folder, the project folder or ARK_HOME reaches the code's output or any
request the server receives.

Run as root (as CI does), the test becomes an unprivileged user first (``tests/support/unprivileged.py``). The child
is a whole GraphScout run (``tests/support/non_root_child.py``) whose sandbox is built as that user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ark.sandbox import bwrap_problem
from tests.support.openai_server import text_reply, tool_reply, turn_script
from tests.support.unprivileged import REPO, USER_ID, checkout_closed, unprivileged_prefix

pytest.importorskip("ladybug")
pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap sandbox: {bwrap_problem()}")

from ark.methods.graphscout.tools import CODE_INTERPRETER  # noqa: E402

CHILD = REPO / "tests" / "support" / "non_root_child.py"
CANARY = "canary-7f3e9a"
# Where an ordinary user keeps secrets (relative to the home folder), each holding a distinct canary.
SECRET_FILES = [".npmrc", ".pypirc", ".bash_history", ".netrc", ".config/gcloud/credentials.db",
                ".config/gcloud/application_default_credentials.json", ".azure/msal_token_cache.json",
                ".azure/accessTokens.json", ".ssh/id_ed25519", ".aws/credentials", "project/.env",
                ".ark/config.toml", ".ark/llm-cache/ab/prompt.json"]
HUNT = """
import os
found, read = [], 0
for top in ({home!r}, {project!r}, {ark_home!r}, '/root', '/home', '/var/tmp', os.getcwd(), '/proc/1/cwd'):
    for folder, folders, files in os.walk(top):
        folders[:] = [f for f in folders if not f.startswith(('python3', 'site-packages'))]  # the interpreter's
        for name in files:
            try:
                text = open(os.path.join(folder, name), errors='replace').read(4000)
            except OSError:
                continue
            read += 1
            found += [line for line in text.splitlines() if 'token' in line]
for name in os.listdir('/proc'):
    try:
        found.append(open(f'/proc/{{name}}/environ', errors='replace').read())
    except OSError:
        pass
print('read', read, 'files; environment', sorted(os.environ))
print('\\n'.join(found))
"""


def plant(home: Path) -> list[str]:
    canaries = []
    for k, name in enumerate(SECRET_FILES):
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        canaries.append(f"{CANARY}-{k}")
        path.write_text(f'token = "{canaries[-1]}"\n')
    return canaries


def test_an_ordinary_users_secrets_never_reach_the_model(openai_server, tmp_path):
    closed = checkout_closed()
    if closed and os.geteuid() == 0:  # folders above the checkout are opened by the view; the checkout's own are not
        pytest.skip(f"{closed} is closed to other users (mode {os.stat(closed).st_mode & 0o777:o})")
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.home()  # not /tmp: the sandbox replaces that
    home = Path(tempfile.mkdtemp(prefix="ark-canary-home-", dir=base))
    try:
        canaries = plant(home)
        project, ark_home = home / "project", home / ".ark"
        if os.geteuid() == 0:
            for folder, _, files in os.walk(home):
                os.chown(folder, USER_ID, USER_ID)
                for name in files:
                    os.chown(os.path.join(folder, name), USER_ID, USER_ID)
        code = HUNT.format(home=str(home), project=str(project), ark_home=str(ark_home))
        openai_server.responder = turn_script([tool_reply((CODE_INTERPRETER, {"code": code})),
                                               text_reply("\\answer{2}")])
        env = {"HOME": str(home), "ARK_HOME": str(ark_home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "OPENAI_API_KEY": f"{CANARY}-key", "PYTHONPATH": str(REPO), "LANG": "C.UTF-8"}
        command = [*unprivileged_prefix(home), sys.executable, str(CHILD), openai_server.base_url]
        done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-3000:]
        assert done.stdout.strip().splitlines()[-1] == "uid ok" or os.geteuid() != 0, done.stdout
        observation = [m["content"] for m in openai_server.requests[-1]["messages"] if m["role"] == "tool"][0]
        assert "files; environment ['HOME'" in observation and "answer 2" in done.stdout, observation[-2000:]
        seen = "\n".join(str(body) for body in openai_server.requests) + done.stdout
        leaked = [c for c in canaries if c in seen]
        assert not leaked, (leaked, observation[:2000])
    finally:
        shutil.rmtree(home, ignore_errors=True)
