"""Finding agent files: every `*.md` under each agents folder, however deep, and what got in the way.

Collections keep agents in subfolders (`engineering/backend.md`), so folders are walked recursively,
in name order, symbolic links followed. A folder named by a glob (`plugins/*/agents`) stands for the
folders it matches when the scan runs, in sorted order. Skipped without a word: names starting with a
dot (`.git`, editors' swap files), `README.md`, which documents a collection, `__pycache__` or
`node_modules` folders, and the artifacts folder (where handlers write their Markdown), wherever it
is. Reported, each with its path and the rule, while the walk goes on: a folder that cannot be read,
a symbolic link that loops or leads nowhere, a path that is not a regular file, an agents folder
inside the artifacts folder.
"""

from __future__ import annotations

import errno
import functools
import glob
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
    """The folders an `agents_dir` setting names (os.pathsep between them; a glob stays a glob, see
    `expand`), and `.claude/agents` in place of the default `./agents` when that does not exist and the
    other does."""
    folders = [Path(part) for part in setting.split(os.pathsep) if part]
    if folders == [Path("./agents")] and not DEFAULT_FOLDER.exists() and CLAUDE_FOLDER.is_dir():
        return [CLAUDE_FOLDER]
    return folders


def is_glob(folder: Path | str) -> bool:
    return glob.has_magic(str(folder))


def matches(pattern: Path | str) -> list[Path]:
    """The folders a glob matches now, in sorted order (`**` spans folders; names starting with a dot
    are matched only by a pattern that says so, as in a shell)."""
    return [Path(m) for m in sorted(glob.glob(str(pattern), recursive=True)) if os.path.isdir(m)]


def expand(folders: Sequence[Path]) -> list[Path]:
    """The folders to walk: each plain folder as given, each glob replaced by what it matches now."""
    return [found for folder in folders for found in (matches(folder) if is_glob(folder) else [folder])]


def scan(folders: Sequence[Path], artifacts: Sequence[Path] = ()) -> Scan:
    """Walk `folders` (globs expanded), leaving out the `artifacts` folders and everything under them."""
    files: list[tuple[str, FileKey]] = []
    bad_files: list[AgentFileProblem] = []
    problems: list[AgentFileProblem] = []
    seen: dict[tuple[int, int], str] = {}  # folders walked, by (device, inode): a link back is a loop
    skipped = _skipped(artifacts)
    for folder in expand(folders):
        if artifacts and (inside := _inside(str(folder), tuple(map(str, artifacts)))) is not None:
            problems.append(
                AgentFileProblem(
                    folder,
                    f"folder: is inside the artifacts folder {inside}, where handlers write; skipped",
                    "set BLACKBOARD_ARTIFACTS_DIR to a folder outside the agents folders",
                )
            )
            continue
        _walk(str(folder), files, (bad_files, problems), seen, skipped, top=True)
    return Scan(tuple(files), tuple(bad_files), tuple(problems))


def _skipped(artifacts: Sequence[Path]) -> dict[tuple[int, int], str]:
    """The artifacts folders that exist, by (device, inode): a walk that meets one passes it by."""
    found = {}
    for folder in artifacts:
        try:
            st = os.stat(folder)
        except OSError:
            continue
        found[(st.st_dev, st.st_ino)] = str(folder)
    return found


@functools.lru_cache(maxsize=256)  # a worker scans every round; its folders hardly ever move
def _inside(folder: str, artifacts: tuple[str, ...]) -> str | None:
    """The artifacts folder that `folder` is, or is inside of, if any."""
    try:
        real = Path(folder).resolve()
        return next((a for a in artifacts if real.is_relative_to(Path(a).resolve())), None)
    except (OSError, RuntimeError):
        return None


def _walk(
    folder: str,
    files: list,
    said: tuple[list, list],
    seen: dict,
    skipped: dict,
    top: bool = False,
) -> None:
    """Paths are plain strings here: a worker looks at its folders every round, and Path costs."""
    bad_files, problems = said
    try:
        st = os.stat(folder)
        if (st.st_dev, st.st_ino) in skipped:
            return  # the artifacts folder: handlers' output, never agents
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
            _walk(entry.path, files, said, seen, skipped)


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
