"""The file object under a flexmb result file: HDF5 writes through it, and it survives failed writes.

h5py's file-object driver lets HDF5 do its I/O through a Python object. :class:`FaultGuard`
is that object for :mod:`flexmb.io.result_file`: it passes everything to the file until a
write fails, and from then on keeps HDF5's writes in memory, so that the file on disk stays at
its last consistent state and HDF5 itself never meets an error. The rest of this module edits
the HDF5 superblock's status flags in place (byte 11 of a version 2/3 superblock, with its
lookup3 checksum, as in the HDF5 file format specification) and takes the writer's lock.
"""
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flexmb.results.base import Result

#: superblock "file consistency flags": open for writing, open for SWMR writing
WRITE_ACCESS, SWMR_WRITE_ACCESS = 0x01, 0x04


class ResultFileError(OSError):
    """A result file could not be created, written or continued.

    ``path`` is the file, ``steps_on_disk`` the number of steps it holds intact (None when not
    known), ``cause`` the operating system's error, and ``result`` the result in memory with every
    step computed (set when a run ends with this error).
    """

    def __init__(self, message: str, path: str | Path, steps_on_disk: int | None = None,
                 cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.path = Path(path)
        self.steps_on_disk = steps_on_disk
        self.cause = cause
        self.result: Result | None = None


class FaultGuard(io.RawIOBase):
    """The file object HDF5 writes through (h5py's file-object driver).

    Until a write fails it passes reads and writes straight to the file (unbuffered, in the
    order HDF5 issues them). At the first failure it records the error in :attr:`fault`, tells
    HDF5 that all went well, and from then on keeps HDF5's writes in memory (reads see them), so
    that HDF5 never meets an error (a failed flush leaves h5py unable to close the file and can
    crash the interpreter at exit) and the disk keeps the state of the last complete flush.
    Writes that fall inside :attr:`in_place` (the status chunk, overwritten in place) still go to
    the disk after a fault, where they can succeed even on a full disk.

    HDF5 marks a file "open for writing" in its superblock only for drivers that lock files, so
    through this driver it would mark a SWMR writer's file "SWMR writing" alone, which SWMR
    readers refuse. The guard adds "open for writing" to such a superblock as it passes (and
    updates the superblock's checksum), as with HDF5's own driver, and also while
    :attr:`creating` is set (the writer makes the datasets, before SWMR writing starts), so that
    readers wait for the first step instead of finding a half-made file.
    """

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd
        self._pos = 0
        self.fault: OSError | None = None
        self.in_place: tuple[int, int] | None = None          # (offset, size) in bytes
        self.creating = False
        self._kept: list[tuple[int, bytes]] = []              # writes held in memory after a fault
        self._end = 0                                         # logical size after a fault

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            self._pos = offset
        elif whence == io.SEEK_CUR:
            self._pos += offset
        else:
            self._pos = self._size() + offset
        return self._pos

    def tell(self) -> int:
        return self._pos

    def _size(self) -> int:
        size = os.fstat(self.fd).st_size
        return size if self.fault is None else max(size, self._end)

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        n = len(view)
        data = os.pread(self.fd, n, self._pos)
        view[:len(data)] = data
        view[len(data):] = bytes(n - len(data))               # past the end of the file: zeros
        if self.fault is not None:
            for start, blob in self._kept:                    # later writes win
                lo, hi = max(start, self._pos), min(start + len(blob), self._pos + n)
                if lo < hi:
                    view[lo - self._pos:hi - self._pos] = blob[lo - start:hi - start]
        self._pos += n
        return n

    def write(self, buffer) -> int:
        blob = bytes(buffer)
        if self._pos == 0 and _is_superblock(blob) and (self.creating or blob[11] & SWMR_WRITE_ACCESS):
            blob = _with_flags(blob, blob[11] | WRITE_ACCESS)
        if self.fault is None:
            try:
                done = 0
                while done < len(blob):
                    done += os.pwrite(self.fd, blob[done:], self._pos + done)
            except OSError as exc:
                self._fail(exc)
        if self.fault is not None:
            self._keep(blob)
        self._pos += len(blob)
        return len(blob)

    def truncate(self, size: int | None = None) -> int:
        size = self._pos if size is None else size
        if self.fault is None:
            try:
                os.ftruncate(self.fd, size)
            except OSError as exc:
                self._fail(exc)
        if self.fault is not None:
            self._end = size
        return size

    def flush(self) -> None:
        pass                                                  # unbuffered; no fsync per block

    def _fail(self, exc: OSError) -> None:
        self.fault = exc
        self._end = os.fstat(self.fd).st_size

    def _keep(self, blob: bytes) -> None:
        self._kept.append((self._pos, blob))
        self._end = max(self._end, self._pos + len(blob))
        if self.in_place is not None:
            start, size = self.in_place
            if start <= self._pos and self._pos + len(blob) <= start + size:
                try:
                    os.pwrite(self.fd, blob, self._pos)
                except OSError:
                    pass                                      # the status stays as it was


def _lookup3(data: bytes) -> int:
    """Bob Jenkins' lookup3 hash (``hashlittle``, initial value 0): HDF5's metadata checksum."""
    mask = 0xFFFFFFFF

    def rot(x: int, k: int) -> int:
        return ((x << k) | (x >> (32 - k))) & mask

    a = b = c = (0xDEADBEEF + len(data)) & mask
    if not data:
        return c
    words = [int.from_bytes(data[i:i + 4].ljust(4, b"\0"), "little") for i in range(0, len(data), 4)]
    words += [0] * (-len(words) % 3)                          # the last block of 12 bytes, zero-padded
    for k in range(0, len(words), 3):
        a, b, c = (a + words[k]) & mask, (b + words[k + 1]) & mask, (c + words[k + 2]) & mask
        if k + 3 == len(words):
            break
        for x, y, shift in ((0, 2, 4), (1, 0, 6), (2, 1, 8), (0, 2, 16), (1, 0, 19), (2, 1, 4)):   # mix
            v = [a, b, c]
            v[x] = ((v[x] - v[y]) & mask) ^ rot(v[y], shift)
            v[y] = (v[y] + v[3 - x - y]) & mask
            a, b, c = v
    for x, y, shift in ((2, 1, 14), (0, 2, 11), (1, 0, 25), (2, 1, 16), (0, 2, 4), (1, 0, 14), (2, 1, 24)):
        v = [a, b, c]                                         # final
        v[x] = ((v[x] ^ v[y]) - rot(v[y], shift)) & mask
        a, b, c = v
    return c


def _is_superblock(head: bytes) -> bool:
    """``head`` starts with a version 2 or 3 superblock with 8-byte addresses (48 bytes) whose
    checksum matches."""
    return (len(head) >= 48 and head[:8] == b"\x89HDF\r\n\x1a\n" and head[8] in (2, 3) and head[9] == 8
            and _lookup3(head[:44]) == int.from_bytes(head[44:48], "little"))


def _with_flags(head: bytes, flags: int) -> bytes:
    """A superblock (``head``, see :func:`_is_superblock`) with other status flags (byte 11)."""
    fixed = head[:11] + bytes([flags & 0xFF]) + head[12:44]
    return fixed + _lookup3(fixed).to_bytes(4, "little") + head[48:]


def clear_open_flags(fd: int) -> None:
    """Clear the "open for (SWMR) writing" flags of the superblock at the start of the file, in
    place (what ``h5clear --status`` does), so that every HDF5 reader opens it again."""
    head = os.pread(fd, 48, 0)
    if _is_superblock(head) and head[11] & (WRITE_ACCESS | SWMR_WRITE_ACCESS):
        os.pwrite(fd, _with_flags(head, head[11] & ~(WRITE_ACCESS | SWMR_WRITE_ACCESS)), 0)


def lock_for_writing(fd: int, path: Path) -> None:
    """Take the writer's advisory lock on the file, or say who holds it."""
    try:
        import fcntl
    except ImportError:                                       # Windows: HDF5's own locking only
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise ResultFileError(f"result file {path} is being written by another run (it holds the file's "
                              "write lock); wait for it to end or write to another file", path) from None
