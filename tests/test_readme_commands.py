"""Every command in README.md's ```sh blocks, run exactly as written, in README order, in a fresh clone.

What a newcomer gets: a `git clone` (so no `.env`, no database, no collected static files), with the
checkout's `.venv` linked in so that nothing is downloaded, run with a clean environment (PATH and
HOME only: no DATABASE_URL, so SQLite and in-process tasks, as for a newcomer). Commands run one after
another in the same clone, so later ones use what earlier ones made (`.env`, the SQLite database).

- A command exits 0; where the README shows its output as a `# {...}` comment on the next line, the
  output's last line is JSON of the same shape (same keys, same value types).
- `make run ...` serves until stopped: it is started, must answer HTTP 200 on its port (and print the
  demo's links with that port), and is then stopped with its whole process group.
- A command that cannot run here is listed in NOT_RUN with the reason; keep that list minimal.

New README commands are tested without touching this file. The module is marked `slow`
(`pytest -m "not slow"` leaves it out) and runs in `make test` by default.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
STAMP = Path(".venv") / ".installed"
# Set in the commands' environment: a command that runs the test suite again must not run this module again.
NESTED = "MTEVAL_README_COMMANDS"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(os.environ.get(NESTED)), reason="already inside a README command (make test)"),
]

#: Commands that cannot run in a test, by their words (comments dropped, quotes removed), with the reason.
NOT_RUN = {
    "make test": "runs this test suite, and so this test, again",
    "eval $(scripts/start-services.sh) && make test": "runs this test suite again; and starts system services as root",
    "docker compose up": "needs Docker and downloads images",
}
#: Commands that serve until stopped: the first words.
SERVERS = (("make", "run"),)
SERVER_TIMEOUT = 120  # seconds for `make run` to migrate, load the demo and answer
COMMAND_TIMEOUT = 120


@dataclass
class Command:
    text: str  # as written (continuations joined), with any trailing comment
    expected: str | None = None  # the `# {...}` line that follows it, without the `# `

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text, comments=True)

    @property
    def key(self) -> str:
        return " ".join(self.words)


def readme_commands(text: str) -> list[Command]:
    """The commands of the ```sh blocks: `#` lines are comments (a `# {...}` line right after a command is
    its expected output), `\\` continues a line, blank lines are skipped."""
    commands: list[Command] = []
    for block in re.findall(r"^```sh[ \t]*\n(.*?)^```", text, flags=re.S | re.M):
        current = ""
        follows_command = False
        for line in block.splitlines():
            if current:
                line = current + " " + line.strip()
                current = ""
            stripped = line.strip()
            if stripped.endswith("\\"):
                current = stripped[:-1].rstrip()
                continue
            if not stripped:
                follows_command = False
                continue
            if stripped.startswith("#"):
                comment = stripped[1:].strip()
                if follows_command and comment.startswith(("{", "[")) and commands[-1].expected is None:
                    commands[-1].expected = comment
                else:
                    follows_command = False
                continue
            commands.append(Command(stripped))
            follows_command = True
        assert not current, f"README.md: a ```sh block ends in a continuation: {current!r}"
    return commands


COMMANDS = readme_commands(README.read_text(encoding="utf-8"))


def clean_env() -> dict[str, str]:
    """A newcomer's environment: PATH and HOME (and the locale and temporary folder), nothing else."""
    env = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR") if name in os.environ}
    env.setdefault("HOME", str(Path.home()))
    # Unbuffered, so a server's output can be read while it runs; and the guard against recursion.
    env.update(PYTHONUNBUFFERED="1", **{NESTED: "1"})
    return env


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A clone of the checkout with the working tree's uncommitted changes brought over (in CI the
    checkout is clean and this adds nothing), its `.venv` a link to the checkout's."""
    stamp = ROOT / STAMP
    if not stamp.exists():
        pytest.skip(f"{stamp} is missing: run `make install` (the clone reuses the checkout's .venv)")
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout")
    dest = tmp_path_factory.mktemp("readme") / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(dest)], check=True, capture_output=True)
    changed = git("diff", "--name-only", "-z", "HEAD").split("\0")
    untracked = git("ls-files", "--others", "--exclude-standard", "-z").split("\0")
    for name in filter(None, changed + untracked):
        source, target = ROOT / name, dest / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        elif target.is_file():
            target.unlink()
    (dest / ".venv").symlink_to(ROOT / ".venv", target_is_directory=True)
    # The install stamp lives in the shared .venv; the clone's requirement files are new files. Give
    # them the stamp's time, so make sees the installation as current and never rebuilds the shared venv.
    stamped = stamp.stat().st_mtime_ns
    for requirements in dest.glob("requirements*.txt"):
        os.utime(requirements, ns=(stamped, stamped))
    question = subprocess.run(["make", "-q", str(STAMP)], cwd=dest, env=clean_env(), capture_output=True, text=True)
    assert question.returncode == 0, f"make would rebuild the shared .venv from the clone:\n{question.stdout}"
    return dest


def shape(value):
    """The shape of a JSON value: keys and value types, not values."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value[:1]]
    return type(value).__name__


def port_free(host: str, port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop(proc: subprocess.Popen) -> None:
    """End the command's process group (make, manage.py runserver and its autoreloader child) and only it."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def on_port(command: Command, env: dict, port: int) -> tuple[str, dict]:
    """The same command, serving on `port` instead of the one it names (or make's default)."""
    if any(word.startswith("PORT=") for word in command.words):
        return re.sub(r"\bPORT=\d+\b", f"PORT={port}", command.text), env
    return command.text, {**env, "PORT": str(port)}


def serve(command: Command, clone: Path, env: dict) -> None:
    """Start a serving command, wait for HTTP 200 on its port, check the printed links, stop it.

    Another checkout's `make run` may hold the port (or take it while this one migrates): then the same
    command serves on a free port instead, so that the answer checked is this server's."""
    settings = dict(word.split("=", 1) for word in command.words[2:] if "=" in word)
    host, port = settings.get("HOST", "127.0.0.1"), int(settings.get("PORT", "8000"))
    text, note = command.text, ""
    for attempt in range(3):
        if attempt or not port_free(host, port):
            new_port = free_port()
            text, env = on_port(command, env, new_port)
            note = f" (port {port} was taken, so on {new_port})"
            port = new_port
        log_path = clone / f".readme-server-{port}.log"
        with open(log_path, "w") as log:
            proc = subprocess.Popen(["bash", "-c", text], cwd=clone, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        banner = f"Starting development server at http://{host}:{port}/"
        status, deadline = None, time.monotonic() + SERVER_TIMEOUT
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                if banner not in log_path.read_text(errors="replace"):
                    time.sleep(0.3)
                    continue
                try:
                    with urllib.request.urlopen(f"http://{host}:{port}/", timeout=5) as response:
                        status = response.status
                    break
                except urllib.error.HTTPError as exc:
                    status = exc.code
                    break
                except OSError:
                    time.sleep(0.3)
            alive = proc.poll() is None
        finally:
            stop(proc)
        output = log_path.read_text(errors="replace")
        if alive or "That port is already in use" not in output:
            break
    assert alive and status == 200, (f"`{command.text}`{note}: {status or 'no answer'} from http://{host}:{port}/ "
                                     f"(exit code {proc.returncode}); output:\n{output[-4000:]}")
    assert f"http://{host}:{port}/c/" in output, (f"`{command.text}`{note}: the printed links miss port {port}:\n"
                                                  f"{output}")


@pytest.mark.parametrize("command", COMMANDS, ids=[c.text.split("#")[0].strip() for c in COMMANDS])
def test_readme_command(command: Command, clone: Path):
    if command.key in NOT_RUN:
        pytest.skip(f"not run here: {NOT_RUN[command.key]}")
    env = clean_env()
    if tuple(command.words[:2]) in SERVERS:
        serve(command, clone, env)
        return
    result = subprocess.run(["bash", "-c", command.text], cwd=clone, env=env, capture_output=True, text=True,
                            timeout=COMMAND_TIMEOUT)
    assert result.returncode == 0, (f"`{command.text}` exited {result.returncode}:\n"
                                    f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    if command.expected is not None:
        lines = result.stdout.strip().splitlines()
        assert lines, f"`{command.text}` printed nothing; the README shows {command.expected}"
        assert shape(json.loads(lines[-1])) == shape(json.loads(command.expected)), (
            f"`{command.text}` printed {lines[-1]}; the README shows {command.expected}")


def test_env_file_made_once_for_development(clone: Path):
    """The clone has the `.env` that make wrote (the README's `make install`): a generated key and DEBUG=1;
    `make install` again leaves it as it was."""
    env_file = clone / ".env"
    if not env_file.exists():  # only when this test runs without the README's commands
        subprocess.run(["make", "install"], cwd=clone, env=clean_env(), check=True, capture_output=True)
    before = env_file.read_text()
    values = dict(line.split("=", 1) for line in before.splitlines() if line)
    assert values["DEBUG"] == "1"
    assert len(values["SECRET_KEY"]) >= 50
    subprocess.run(["make", "install"], cwd=clone, env=clean_env(), check=True, capture_output=True)
    assert env_file.read_text() == before


def test_not_run_list_is_current():
    """Every command listed as not run is still in the README (the list stays minimal)."""
    keys = {command.key for command in COMMANDS}
    assert set(NOT_RUN) <= keys, f"no longer in README.md: {sorted(set(NOT_RUN) - keys)}"


def test_parser():
    text = ("```sh\nmake run   # serve\n# a comment\n.venv/bin/python manage.py x \\\n  --name \"A b\"\n"
            "# {\"campaign\": \"a\", \"hits\": 1}\n\nmake test\n```\n```json\n{}\n```\n")
    commands = readme_commands(text)
    assert [c.text for c in commands] == ["make run   # serve", '.venv/bin/python manage.py x --name "A b"',
                                          "make test"]
    assert commands[0].expected is None and commands[1].expected == '{"campaign": "a", "hits": 1}'
    assert commands[1].words == [".venv/bin/python", "manage.py", "x", "--name", "A b"]
