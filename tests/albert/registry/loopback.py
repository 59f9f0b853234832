"""A loopback HTTP server (127.0.0.1 only) of in-memory files, for the fetch
tests: Range requests, a response cut off after some bytes, extra headers
(a digest), and a log of every request."""

import http.server
import threading
from typing import Dict, List, Optional, Tuple


class Server:
  """Serves `files` (URL path -> bytes) until `close()`.

  Attributes:
    files: what is served; a path not in it is a 404.
    cut: path -> bytes to send before the connection drops (once each).
    headers: path -> extra response headers.
    requests: (path, Range header or None) of every GET, in order.
  """

  def __init__(self):
    self.files: Dict[str, bytes] = {}
    self.cut: Dict[str, int] = {}
    self.headers: Dict[str, Dict[str, str]] = {}
    self.requests: List[Tuple[str, Optional[str]]] = []
    self._lock = threading.Lock()
    server = self

    class Handler(http.server.BaseHTTPRequestHandler):

      def do_GET(self):  # noqa: N802 (the stdlib's name)
        path = self.path.split("?", 1)[0]
        with server._lock:  # pylint: disable=protected-access
          server.requests.append((path, self.headers.get("Range")))
          data = server.files.get(path)
          cut = server.cut.pop(path, None)
        if data is None:
          self.send_error(404)
          return
        start = 0
        wanted = self.headers.get("Range")
        if wanted and wanted.startswith("bytes="):
          start = int(wanted[len("bytes=") :].split("-")[0])
          if start >= len(data):
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{len(data)}")
            self.end_headers()
            return
          self.send_response(206)
          self.send_header(
              "Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}"
          )
        else:
          self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        for key, value in server.headers.get(path, {}).items():
          self.send_header(key, value)
        self.end_headers()
        body = data[start:]
        if cut is not None:
          self.wfile.write(body[:cut])
          self.wfile.flush()
          self.close_connection = True
          return
        self.wfile.write(body)

      def log_message(self, *args):  # quiet
        del args

    self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    self._thread = threading.Thread(
        target=self._httpd.serve_forever, daemon=True
    )
    self._thread.start()

  @property
  def url(self) -> str:
    host, port = self._httpd.server_address[:2]
    return f"http://{host}:{port}"

  def gets(self, path: str) -> List[Optional[str]]:
    """The Range header of each GET of `path`."""
    return [r for p, r in self.requests if p == path]

  def close(self) -> None:
    self._httpd.shutdown()
    self._httpd.server_close()
