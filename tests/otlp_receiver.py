"""A test's OpenTelemetry collector: an OTLP/HTTP logs endpoint on the loopback address that decodes
each request with the real OTLP protobuf schema (opentelemetry-proto) and keeps what it got.

It can be stopped (connections are then refused, as with a collector that is down) and started
again on the same port, or made to answer 503 for a while (a collector that is overloaded).
"""

from __future__ import annotations

import gzip
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest, ExportLogsServiceResponse


def _value(any_value):
    kind = any_value.WhichOneof("value")
    return None if kind is None else getattr(any_value, kind)


class Received:
    """One log record as the collector decoded it."""

    def __init__(self, resource: dict, scope: str, record) -> None:
        self.resource = resource
        self.scope = scope
        self.event_name = record.event_name
        self.time = record.time_unix_nano
        self.severity = record.severity_text
        self.body = _value(record.body)
        self.attributes = {a.key: _value(a.value) for a in record.attributes}

    @property
    def id(self) -> str:
        return self.attributes["gatekeep.id"]


class Receiver:
    def __init__(self) -> None:
        self.records: list[Received] = []
        self.requests = 0
        self.refuse = 0  # answer 503 to this many requests
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.port = 0
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1/logs"

    def ids(self) -> list[str]:
        with self._lock:
            return [r.id for r in self.records]

    def start(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                encoding = self.headers.get("Content-Encoding")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                with receiver._lock:
                    receiver.requests += 1
                    if self.path != "/v1/logs" or self.headers.get("Content-Type") != "application/x-protobuf":
                        self._answer(400, b"")
                        return
                    if receiver.refuse > 0:
                        receiver.refuse -= 1
                        self._answer(503, b"")
                        return
                    request = ExportLogsServiceRequest.FromString(body)
                    for resource_logs in request.resource_logs:
                        resource = {a.key: _value(a.value) for a in resource_logs.resource.attributes}
                        for scope_logs in resource_logs.scope_logs:
                            for record in scope_logs.log_records:
                                receiver.records.append(Received(resource, scope_logs.scope.name, record))
                self._answer(200, ExportLogsServiceResponse().SerializeToString())

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
