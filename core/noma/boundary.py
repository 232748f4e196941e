"""The file boundary: every write (and every read-for-write) under a workspace goes here.

Architecture, "The workspace is untrusted input": a cloned folder may hold symlinks that
point anywhere the user can write (``notes.noma.patches -> ~/.bashrc``). A path joined and
handed to ``open`` follows them; this module never does. A `Folder` is an open directory
file descriptor, and a file beside a document (the document itself, its transcript, its
pending record, temp files, exports) is opened *relative to that descriptor* with
``O_NOFOLLOW``: a symlink there is refused with a coded `BoundaryError`, never followed.
A folder below a root is reached one component at a time (``openat`` with
``O_NOFOLLOW | O_DIRECTORY``), so no symlinked directory can lead out of the root either.

What is trusted is what the user typed: the root (``noma mcp --root``, the app's
workspace) or, for a CLI call given one file, the directory part of that path. Everything
below it is checked.

Codes (every surface reports them as given: MCP ``{ok: false, code, error}``, CLI exit 2):

- ``outside_root``: the path leaves the root (``..``, an absolute path elsewhere);
- ``symlink_refused``: a component, the file or a state file is a symbolic link;
- ``not_regular_file``: the file is a directory, FIFO, device or socket;
- ``not_a_document``: a document tool was pointed at something that is not a ``.noma`` file;
- ``state_dir_refused``: ``.noma-workbench/`` (or a folder in it) is a symlink, not a
  directory, or not owned by the current user;
- ``hard_link_refused``: a file to be written in place (a transcript append, a pending
  record) has another name too: a hard link planted beside a document is another file (a
  shared drive, an extracted archive), so writing it in place would write that file.
  Documents themselves are only ever replaced by rename, which leaves other names alone.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

OUTSIDE_ROOT = "outside_root"
SYMLINK_REFUSED = "symlink_refused"
NOT_REGULAR_FILE = "not_regular_file"
NOT_A_DOCUMENT = "not_a_document"
STATE_DIR_REFUSED = "state_dir_refused"
HARD_LINK_REFUSED = "hard_link_refused"
_WRITES = os.O_WRONLY | os.O_RDWR

DOCUMENT_SUFFIX = ".noma"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NOFOLLOW_DIR = _DIR_FLAGS | os.O_NOFOLLOW


class BoundaryError(OSError):
    """A path or file the boundary refuses; ``code`` says which rule (see module doc).

    An `OSError` so callers that already report filesystem faults report this one too."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def _refusal(exc: OSError, where: str) -> BoundaryError | None:
    """The coded error for what ``O_NOFOLLOW``/``O_DIRECTORY`` opens fail with."""
    if exc.errno == errno.ELOOP:
        return BoundaryError(SYMLINK_REFUSED, f"{where}: is a symbolic link; not followed")
    if exc.errno == errno.ENOTDIR:
        return BoundaryError(NOT_REGULAR_FILE, f"{where}: is not a directory")
    if exc.errno == errno.ENXIO:  # a FIFO with no reader, opened O_NONBLOCK for writing
        return BoundaryError(NOT_REGULAR_FILE, f"{where}: is not a regular file")
    return None


class Folder:
    """An open directory: files in it are opened by name relative to its descriptor.

    ``path`` is for messages and for APIs that need a path (it names the same directory
    unless someone renames it meanwhile; writes never go through it)."""

    __slots__ = ("fd", "path")

    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path) -> Folder:
        """A directory the user named (trusted as typed: symlinks in it are followed)."""
        p = Path(path) if str(path) else Path(".")
        try:
            fd = os.open(p, _DIR_FLAGS)
        except NotADirectoryError as exc:
            raise BoundaryError(NOT_REGULAR_FILE, f"{p}: is not a directory") from exc
        return cls(fd, p)

    @classmethod
    def under(cls, root: str | Path, relative: PurePosixPath | tuple[str, ...]) -> Folder:
        """``root/relative`` reached one component at a time, no symlink followed."""
        base = cls.open(root)
        parts = relative.parts if isinstance(relative, PurePosixPath) else relative
        try:
            for part in parts:
                base = base.child(part)
        except BaseException:
            base.close()
            raise
        return base

    def child(self, name: str) -> Folder:
        """The subdirectory ``name`` (this folder is closed: a walk hands over its fd)."""
        _check_name(name)
        where = self.path / name
        try:
            fd = os.open(name, _NOFOLLOW_DIR, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno == errno.ENOTDIR and self._is_link(name):
                exc = OSError(errno.ELOOP, "symbolic link")  # Linux says ENOTDIR first
            refused = _refusal(exc, str(where))
            if refused is None:
                raise
            raise refused from exc
        finally:
            self.close()
        return Folder(fd, where)

    def _is_link(self, name: str) -> bool:
        try:
            return stat.S_ISLNK(os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mode)
        except OSError:
            return False

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- files by name -------------------------------------------------------------------

    def lstat(self, name: str) -> os.stat_result | None:
        """The entry itself (a symlink is not followed); None when there is none."""
        _check_name(name)
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def check_file(self, name: str) -> os.stat_result | None:
        """``name`` is absent (None) or a regular file (its stat); anything else refused."""
        st = self.lstat(name)
        if st is None:
            return None
        if stat.S_ISLNK(st.st_mode):
            raise BoundaryError(SYMLINK_REFUSED, f"{self.path / name}: is a symbolic link")
        if not stat.S_ISREG(st.st_mode):
            raise BoundaryError(NOT_REGULAR_FILE, f"{self.path / name}: is not a regular file")
        return st

    def open_file(self, name: str, flags: int, mode: int = 0o644) -> int:
        """``os.open`` of ``name`` in this folder: never through a symlink, only a regular
        file (a FIFO or device is refused without blocking on it)."""
        _check_name(name)
        try:
            fd = os.open(
                name,
                flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                mode,
                dir_fd=self.fd,
            )
        except OSError as exc:
            refused = _refusal(exc, str(self.path / name))
            if refused is None:
                raise  # never `raise exc from exc`: a self-cause is a reference cycle that
                # keeps every frame of the stack (and a patch's buffers) alive until a GC
            raise refused from exc
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise BoundaryError(NOT_REGULAR_FILE, f"{self.path / name}: is not a regular file")
            if flags & _WRITES and st.st_nlink > 1:
                raise BoundaryError(
                    HARD_LINK_REFUSED,
                    f"{self.path / name}: has {st.st_nlink} names (a hard link); it is not "
                    "written in place",
                )
            fl = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, fl & ~os.O_NONBLOCK)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read_bytes(self, name: str) -> bytes | None:
        """The whole file, or None when it does not exist."""
        try:
            fd = self.open_file(name, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            return read_all(fd)
        finally:
            os.close(fd)

    def write_new(self, name: str, data: bytes, mode: int = 0o644) -> os.stat_result:
        """Create ``name`` (it must not exist) with ``data``, fsynced; its stat then (what
        the warm path compares later stats with, `core.noma.warm_files`)."""
        fd = self.open_file(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            write_all(fd, data)
            os.fsync(fd)
            return os.fstat(fd)
        finally:
            os.close(fd)

    def replace(self, source: str, target: str) -> None:
        """Rename ``source`` over ``target`` within this folder (a symlink at ``target``
        is replaced itself, never followed)."""
        _check_name(source)
        _check_name(target)
        os.replace(source, target, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def unlink(self, name: str) -> bool:
        """Remove the entry ``name`` (a symlink is removed, not its target); False if gone."""
        _check_name(name)
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            return False
        return True

    def names(self) -> list[str]:
        return os.listdir(self.fd)

    def fsync(self) -> None:
        os.fsync(self.fd)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """An exclusive ``flock`` on this directory for one read-modify-write."""
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(self.fd, fcntl.LOCK_UN)

    def atomic_write(self, name: str, data: bytes, temp: str) -> None:
        """``data`` into ``name`` through the temp file ``temp`` (fsync, rename, fsync dir);
        an existing ``name`` keeps its mode; a symlink or non-file at ``name`` is refused."""
        st = self.check_file(name)
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o644
        try:
            self.write_new(temp, data, mode)
            self.replace(temp, name)
        except BaseException:
            with contextlib.suppress(OSError):
                self.unlink(temp)
            raise
        self.fsync()

    def create_new(self, name: str, data: bytes, temp: str) -> None:
        """Create ``name`` holding ``data``, never replacing what is there: ``temp`` is
        written and fsynced, then hard-linked to ``name`` (atomic, and `FileExistsError`
        if the name is taken, by a planted symlink too), then the folder is fsynced. A
        crash leaves no file or the whole one, never half of it."""
        _check_name(name)
        self.write_new(temp, data)
        try:
            os.link(temp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        finally:
            with contextlib.suppress(OSError):
                self.unlink(temp)
        self.fsync()


def _check_name(name: str) -> None:
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise BoundaryError(OUTSIDE_ROOT, f"{name!r}: not a plain file name")


def read_all(fd: int) -> bytes:
    """Everything from ``fd`` to its end, read the way ``Path.read_bytes`` reads (one
    buffer sized by ``fstat``; a loop of ``os.read`` calls churned the heap with a fresh
    multi-megabyte buffer and an EOF probe on every patch, about 4 ms of system time)."""
    with open(fd, "rb", buffering=0, closefd=False) as fh:
        return fh.read()


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# -- placing a file under a root ---------------------------------------------------------


def relative_parts(root: Path, path: str | Path) -> tuple[str, ...]:
    """``path`` as components below ``root``, lexically (``..`` resolved without touching
    the disk); `BoundaryError` ``outside_root`` when it leaves the root."""
    p = Path(path)
    joined = p if p.is_absolute() else root / p
    normal = Path(os.path.normpath(joined))
    base = Path(os.path.normpath(root))
    if not normal.is_relative_to(base) or normal == base:
        raise BoundaryError(OUTSIDE_ROOT, f"{path}: outside the root {root}")
    return normal.relative_to(base).parts


class Place:
    """Where a file lives: its open folder and its name in it (a document, an export)."""

    __slots__ = ("folder", "name")

    def __init__(self, folder: Folder, name: str) -> None:
        self.folder = folder
        self.name = name

    @property
    def path(self) -> Path:
        return self.folder.path / self.name

    def sibling(self, name: str) -> Place:
        """Another name in the same folder (shares the descriptor; do not close both)."""
        return Place(self.folder, name)

    def close(self) -> None:
        self.folder.close()

    def __enter__(self) -> Place:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def place(path: str | Path, root: str | Path | None = None) -> Place:
    """The folder of ``path`` opened safely, and the file's name in it.

    With ``root`` the folder is reached from the root without following a symlink; without
    one the path's directory is trusted as the user typed it. The file itself is checked
    (absent or a regular file; a symlink is refused)."""
    p = Path(path)
    if root is not None:
        parts = relative_parts(Path(root), p)
        folder = Folder.under(root, parts[:-1])
        name = parts[-1]
        display = Path(root).joinpath(*parts)
    else:
        if p.name in ("", ".", ".."):
            raise BoundaryError(NOT_REGULAR_FILE, f"{p}: is not a file")
        folder = Folder.open(p.parent)
        name = p.name
        display = p
    folder.path = display.parent
    try:
        folder.check_file(name)
    except BaseException:
        folder.close()
        raise
    return Place(folder, name)


def document_place(path: str | Path, root: str | Path | None = None) -> Place:
    """`place` for a file a document tool edits: a ``.noma`` file, nothing else."""
    if not str(path).endswith(DOCUMENT_SUFFIX):
        raise BoundaryError(
            NOT_A_DOCUMENT,
            f"{path}: not a .noma document; the document tools edit .noma files only",
        )
    return place(path, root)


def check_document(path: str | Path, root: str | Path | None = None) -> None:
    """Refuse (coded) unless ``path`` is a ``.noma`` file reachable without symlinks."""
    document_place(path, root).close()


def read_file(path: str | Path, root: str | Path | None = None) -> bytes | None:
    """A file's bytes read through the boundary (None when it does not exist)."""
    with place(path, root) as where:
        return where.folder.read_bytes(where.name)


def write_file(path: str | Path, data: bytes, root: str | Path | None = None) -> None:
    """Replace or create the file at ``path`` atomically through the boundary (exports,
    ``fmt --write``, ``render --out``, a new document): never through a symlink. Takes no
    lock (a caller that reads before it writes holds `Folder.locked` itself)."""
    import secrets

    with place(path, root) as where:
        temp = f".{where.name}.{secrets.token_hex(6)}.tmp"
        where.folder.atomic_write(where.name, data, temp)


def create_file(path: str | Path, data: bytes, root: str | Path | None = None) -> None:
    """Create the file at ``path`` through the boundary, atomically and only if the name
    is free (`Folder.create_new`); the folder is reached from ``root`` without following
    a symlink, and a symlink at ``path`` is refused."""
    import secrets

    with place(path, root) as where:
        temp = f".{where.name}.{secrets.token_hex(6)}.tmp"
        where.folder.create_new(where.name, data, temp)


# -- state directories -------------------------------------------------------------------


def owned_directory(path: Path, *, create: bool = True, mode: int = 0o700) -> Path:
    """``path`` as a real directory owned by this user: created (``mode``) when missing,
    refused (``state_dir_refused``) when it is a symlink, not a directory or someone
    else's. Its parent is trusted as typed."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, mode)
        st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise BoundaryError(
            STATE_DIR_REFUSED, f"{path}: is a symbolic link; a state folder must be a real one"
        )
    if not stat.S_ISDIR(st.st_mode):
        raise BoundaryError(STATE_DIR_REFUSED, f"{path}: is not a directory")
    if st.st_uid != os.geteuid():
        raise BoundaryError(
            STATE_DIR_REFUSED,
            f"{path}: owned by uid {st.st_uid}, not by this user ({os.geteuid()})",
        )
    return path


def state_file(path: Path) -> Path:
    """A file in a state folder that is opened by path (SQLite): refused if it, or a
    journal SQLite keeps beside it, is a symlink or not a regular file."""
    for candidate in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal"))):
        try:
            st = os.lstat(candidate)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(st.st_mode):
            raise BoundaryError(STATE_DIR_REFUSED, f"{candidate}: is a symbolic link")
        if not stat.S_ISREG(st.st_mode):
            raise BoundaryError(STATE_DIR_REFUSED, f"{candidate}: is not a regular file")
    return path
