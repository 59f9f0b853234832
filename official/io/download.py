"""HTTP downloads that survive real networks: `download(url, path)`.

- The bytes go to `PATH.part` and are renamed to PATH only when complete and
  verified, so PATH is either absent or whole.
- A transfer cut off (a dropped connection, a timeout, a killed process) is
  resumed from the bytes already in `PATH.part` with an HTTP Range request,
  in this process (up to `retries` times) or the next one. A server that
  ignores the range answers 200 and the file starts again.
- A SHA-256 digest, given or sent by the server (the `X-Linked-Etag` /
  `ETag` of 64 hex digits with which the Hugging Face hub names a large
  file's digest), is checked; a mismatch removes the file and raises
  `DownloadError` in one line.
- Progress goes to stderr as one line redrawn in place on a terminal (a line
  every 10% elsewhere): bytes, rate and ETA.

Only the standard library: urllib, so proxies come from the usual
environment variables (`https_proxy`, `no_proxy`).
"""

import http.client
import os
import re
import socket
import sys
import time
import urllib.error
import urllib.request
from typing import Callable, Dict, Optional

from official.core.progress import Progress
from official.core.progress import format_duration
from official.errors import InputError
from official.io import files

CHUNK = 1 << 20
_HEX64 = re.compile(r'^(?:W/)?"?([0-9a-f]{64})"?$')


class DownloadError(InputError):
  """A download failed or gave the wrong bytes (one line: URL, what, what
  to do)."""


class HttpError(DownloadError):
  """The server answered with an error status (e.g. 404)."""

  def __init__(self, message: str, status: int):
    super().__init__(message)
    self.status = status


def format_bytes(n: float) -> str:
  """1536 -> '1.5 KB'."""
  for unit in ("B", "KB", "MB", "GB"):
    if n < 1024 or unit == "GB":
      return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
    n /= 1024
  return f"{n:.1f} GB"


class _Meter:
  """The progress line of one download."""

  def __init__(self, name: str, total: Optional[int], start: int, stream):
    self.name = name
    self.progress = Progress(total, start=start)  # bytes; rate and ETA
    self.stream = stream
    self.tty = hasattr(stream, "isatty") and stream.isatty()
    self.last_shown, self.last_decile = 0.0, -1

  @property
  def total(self) -> Optional[int]:
    return self.progress.total

  def line(self, done: int) -> str:
    self.progress.update(done)
    eta = self.progress.eta
    total = f" / {format_bytes(self.total)}" if self.total else ""
    return (
        f"{self.name}: {format_bytes(done)}{total}, "
        f"{format_bytes(self.progress.rate)}/s, "
        f"ETA {format_duration(eta) if eta is not None else '?'}"
    )

  def show(self, done: int, final: bool = False) -> None:
    if self.stream is None:
      return
    now = time.monotonic()
    if self.tty:
      if final or now - self.last_shown >= 0.2:
        end = "\n" if final else ""
        self.stream.write("\r" + self.line(done) + end)
        self.stream.flush()
        self.last_shown = now
      return
    decile = int(10 * done / self.total) if self.total else -1
    if final or decile > self.last_decile:
      self.stream.write(self.line(done) + "\n")
      self.stream.flush()
      self.last_decile = decile


def server_digest(headers) -> Optional[str]:
  """The SHA-256 a response names for its body (the Hugging Face hub's
  `X-Linked-Etag`, or an `ETag` of 64 hex digits), else None."""
  for key in ("X-Linked-Etag", "ETag"):
    value = headers.get(key)
    if value:
      match = _HEX64.match(value.strip().lower())
      if match:
        return match.group(1)
  return None


def _open(url: str, offset: int, headers: Dict[str, str], timeout: float):
  request = urllib.request.Request(url, headers=dict(headers))
  if offset:
    request.add_header("Range", f"bytes={offset}-")
  try:
    return urllib.request.urlopen(request, timeout=timeout)
  except urllib.error.HTTPError as e:
    if e.code == 416 and offset:  # the part file already holds every byte
      return None
    raise HttpError(f"{url}: HTTP {e.code} {e.reason}", e.code) from None


def download(
    url: str,
    path: str,
    *,
    sha256: Optional[str] = None,
    headers: Optional[Dict[str, str]] = None,
    retries: int = 5,
    timeout: float = 60.0,
    progress=sys.stderr,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
  """Downloads `url` to `path` (see the module docstring); returns its
  SHA-256.

  Args:
    url: http(s) URL.
    path: the local file to create (its directory must exist).
    sha256: the expected digest (hex), or None: the server's, if it names
      one, else unchecked.
    headers: extra request headers (e.g. authorization).
    retries: reconnections after a cut-off transfer, each resuming it.
    timeout: seconds a connection may stay silent.
    progress: the stream of the progress line, None for none.
    sleep: waits between retries (tests pass a fake).

  Raises:
    HttpError: an error status (404, 403, ...): the caller may try another
      source.
    DownloadError: the bytes do not match the digest (the file is removed),
      or the transfer failed `retries + 1` times.
  """
  part = path + ".part"
  headers = headers or {}
  expected = sha256.lower() if sha256 else None
  meter = None
  failures = 0
  while True:
    offset = os.path.getsize(part) if os.path.exists(part) else 0
    try:
      response = _open(url, offset, headers, timeout)
      if response is not None:
        with response:
          if response.status == 200 and offset:
            offset = 0  # the server ignored the range: start again
          expected = expected or server_digest(response.headers)
          length = response.headers.get("Content-Length")
          total = int(length) + offset if length is not None else None
          if meter is None:
            name = os.path.basename(path)
            meter = _Meter(name, total, offset, progress)
          meter.progress.total = total
          with open(part, "ab" if offset else "wb") as f:
            done = offset
            while chunk := response.read(CHUNK):
              f.write(chunk)
              done += len(chunk)
              meter.show(done)
          if total is not None and done < total:
            raise http.client.IncompleteRead(b"", total - done)
          meter.show(done, final=True)
      break
    except (
        http.client.HTTPException,
        urllib.error.URLError,
        socket.timeout,
        ConnectionError,
    ) as e:
      failures += 1
      if failures > retries:
        kept = os.path.getsize(part) if os.path.exists(part) else 0
        raise DownloadError(
            f"{url}: the transfer failed {failures} times ({e}); "
            f"{format_bytes(kept)} kept in {part}: run again to resume"
        ) from None
      sleep(min(2.0**failures, 30.0))
  actual = files.file_sha256(part)
  if expected is not None and actual != expected:
    os.remove(part)
    raise DownloadError(
        f"{url}: SHA-256 {actual} is not the expected {expected}; the file "
        "was removed: try again, or another source or mirror"
    )
  os.replace(part, path)
  return actual
