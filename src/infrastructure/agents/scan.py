"""Finding agent files: every `*.md` under each agents folder, however deep, and what got in the way.

Collections keep agents in subfolders (`engineering/backend.md`), so folders are walked recursively,
in name order, symbolic links followed. Skipped without a word: names starting with a dot (`.git`,
editors' swap files), `README.md`, which documents a collection, and `__pycache__` or `node_modules`
folders. Reported, each with its path and
the rule, while the walk goes on: a folder that cannot be read, a symbolic link that loops or leads
nowhere, a path that is not a regular file.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from blackboard.infrastructure.agents.parsing import AgentFileProblem

FileKey = tuple[int, int, int]  # (mtime_ns, size, inode): a file whose key is unchanged is not re-read
SKIPPED_NAMES = frozenset({"readme.md"})  # compared in lower case
SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules"})  # handlers' folders: never agent files
DEFAULT_FOLDER, CLAUDE_FOLDER = Path("agents"), Path(".claude") / "agents"


@dataclass(frozen=True, slots=True)
class Scan:
    files: tuple[tuple[str, FileKey], ...]  # in walk order
    bad_files: tuple[AgentFileProblem, ...]  # files found but not readable as files (a link loop ...)
    problems: tuple[AgentFileProblem, ...]  # folders that could not be walked


def folders_from(setting: str) -> list[Path]:
    """The folders an `agents_dir` setting names (os.pathsep between them), and `.claude/agents` in
    place of the default `./agents` when that does not exist and the other does."""
    folders = [Path(part) for part in setting.split(os.pathsep) if part]
    if folders == [Path("./agents")] and not DEFAULT_FOLDER.exists() and CLAUDE_FOLDER.is_dir():
        return [CLAUDE_FOLDER]
    return folders


def scan(folders: Sequence[Path]) -> Scan:
    files: list[tuple[str, FileKey]] = []
    bad_files: list[AgentFileProblem] = []
    problems: list[AgentFileProblem] = []
    seen: dict[tuple[int, int], str] = {}  # folders walked, by (device, inode): a link back is a loop
    for folder in folders:
        _walk(str(folder), files, (bad_files, problems), seen, top=True)
    return Scan(tuple(files), tuple(bad_files), tuple(problems))


def _walk(folder: str, files: list, said: tuple[list, list], seen: dict, top: bool = False) -> None:
    """Paths are plain strings here: a worker looks at its folders every round, and Path costs."""
    bad_files, problems = said
    try:
        st = os.stat(folder)
        if (st.st_dev, st.st_ino) in seen:
            first = seen[(st.st_dev, st.st_ino)]
            problems.append(
                AgentFileProblem(
                    Path(folder),
                    f"folder: leads back to {first}, already read (a symbolic "
                    "link loop or a folder named twice); skipped",
                    "remove the link",
                )
            )
            return
        seen[(st.st_dev, st.st_ino)] = folder
        with os.scandir(folder) as found:
            entries = sorted(found, key=lambda e: e.name)
    except FileNotFoundError:
        if not top:  # a missing top folder is an empty one (it may appear later)
            problems.append(
                AgentFileProblem(Path(folder), "folder: is a broken symbolic link", "remove the link")
            )
        return
    except NotADirectoryError:
        problems.append(
            AgentFileProblem(Path(folder), "folder: is not a folder", "name a folder of agent files")
        )
        return
    except OSError as exc:
        problems.append(AgentFileProblem(Path(folder), f"folder: {_why(exc)}", _fix(exc)))
        return
    for entry in entries:
        name = entry.name
        if name.startswith(".") or name in SKIPPED_FOLDERS:
            continue
        if name.endswith(".md"):
            if name.lower() not in SKIPPED_NAMES:
                _file(entry, files, bad_files)
            continue
        try:
            is_dir = entry.is_dir()  # follows a symbolic link
        except OSError:
            is_dir = False
        if is_dir:
            _walk(entry.path, files, said, seen)


def _file(entry: os.DirEntry, files: list, bad_files: list) -> None:
    try:
        st = entry.stat()  # follows a symbolic link
    except OSError as exc:
        bad_files.append(AgentFileProblem(Path(entry.path), f"file: {_why(exc)}", _fix(exc)))
        return
    if not stat.S_ISREG(st.st_mode):
        bad_files.append(
            AgentFileProblem(
                Path(entry.path), "file: is not a regular file", "move it out of the agents folder"
            )
        )
        return
    files.append((entry.path, (st.st_mtime_ns, st.st_size, st.st_ino)))


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "is a symbolic link loop"
    if exc.errno == errno.ENOENT:
        return "is a broken symbolic link"
    return f"cannot be read ({exc.strerror or exc})"


def _fix(exc: OSError) -> str:
    if exc.errno in (errno.ELOOP, errno.ENOENT):
        return "remove the link or point it at a file"
    if exc.errno == errno.EACCES:
        return "make it readable (chmod a+r)"
    return ""
