"""A fake model server on the loopback address, for running the real agent CLIs in tests.

The agent under test is pointed at it (ANTHROPIC_BASE_URL for Claude Code) and asks it, as it
would ask a real model, what to do next. The server's script is one shell command: the first
request that offers a shell tool is answered with a call of that tool running the command; a
request that carries the tool's result back (or offers no shell tool, such as a title or
summary request) is answered with a short text, which ends the session. Every request body is
kept (`requests`), so a test can read what the agent sent back: the command's output, or the
reason gatekeep gave for blocking it.

Only the protocol a CLI needs to run one tool call is spoken: Anthropic's Messages API
(`/v1/messages`: Claude Code, and Copilot CLI and OpenCode through their own providers),
Google's Gemini API (`/v1beta/models/M:generateContent` and `:streamGenerateContent`, Gemini
CLI) and OpenAI's Responses API (`/v1/responses`, Codex), each with and without streaming
(server-sent events).
It binds 127.0.0.1 on a free port, serves in a thread, and answers anything it does not know
with a 404. It also keeps the path of every GET (`fetched`), so that a test can point a package
registry here and see that nothing was fetched.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DONE_TEXT = "Finished."


class FakeModel:
    """`with FakeModel(command) as model:` serves until the block ends; `model.url` is its address."""

    def __init__(self, command: str, tool: str = "Bash", tool_input: dict | None = None) -> None:
        """The call asked for: `tool` with {"command": command}, or with `tool_input` when given."""
        self.tool, self.tool_input = tool, tool_input if tool_input is not None else {"command": command}
        self.requests: list[dict] = []
        self.fetched: list[str] = []  # the paths of GET requests (a package registry's, when pointed here)
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"model": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeModel:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def tool_results(self) -> list[str]:
        """The text of every tool result the agent sent back, in order."""
        found = []
        for body in self.requests:
            for message in body.get("messages", []):
                content = message.get("content")
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        found.append(_text(block.get("content")))
            for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
                if isinstance(item, dict) and item.get("type") == "function_call_output":
                    found.append(_text(item.get("output")))
            for content in body.get("contents", []):
                for part in content.get("parts", []) if isinstance(content, dict) else []:
                    if isinstance(part, dict) and "functionResponse" in part:
                        found.append(json.dumps(part["functionResponse"].get("response"), ensure_ascii=False))
        return list(dict.fromkeys(found))

    def responses_reply(self, body: dict) -> dict:
        """The OpenAI Responses API answer to `body` (Codex): a call of the function tool named
        `self.tool`, until its output comes back."""
        with self.lock:
            self.requests.append(body)
        tools = {t.get("name") for t in body.get("tools", []) if isinstance(t, dict)}
        items = body.get("input", [])
        answered = any(isinstance(i, dict) and i.get("type") == "function_call_output" for i in items)
        n = len(self.requests)
        if self.tool in tools and not answered:
            arguments = json.dumps(self.tool_input)
            output = [{"type": "function_call", "id": f"fc_fake_{n}", "call_id": "call_fake_1", "name": self.tool, "arguments": arguments, "status": "completed"}]
        else:
            content = [{"type": "output_text", "text": DONE_TEXT, "annotations": []}]
            output = [{"type": "message", "id": f"msg_fake_{n}", "role": "assistant", "status": "completed", "content": content}]
        usage = {"input_tokens": 10, "output_tokens": 10, "total_tokens": 20, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
        return {"id": f"resp_fake_{n}", "object": "response", "status": "completed", "model": body.get("model", "fake"), "output": output, "usage": usage}

    def gemini_reply(self, body: dict) -> dict:
        """The Gemini API answer to `body` (a generateContent request)."""
        with self.lock:
            self.requests.append(body)
        tools = {
            d.get("name")
            for t in body.get("tools", []) if isinstance(t, dict)
            for d in t.get("functionDeclarations", []) if isinstance(d, dict)
        }  # fmt: skip
        contents = body.get("contents", [])
        parts = contents[-1].get("parts", []) if contents and isinstance(contents[-1], dict) else []
        answered = any(isinstance(p, dict) and "functionResponse" in p for p in parts)
        if self.tool in tools and not answered:
            part = {"functionCall": {"name": self.tool, "args": self.tool_input}}
        else:
            part = {"text": DONE_TEXT}
        return {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
            "modelVersion": "fake",
        }

    def reply(self, body: dict) -> dict:
        """The Messages API answer to `body`."""
        with self.lock:
            self.requests.append(body)
        tools = {t.get("name") for t in body.get("tools", []) if isinstance(t, dict)}
        messages = body.get("messages", [])
        last = messages[-1].get("content") if messages else None
        answered = isinstance(last, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in last
        )
        if self.tool in tools and not answered:
            content = [{"type": "tool_use", "id": "toolu_fake_1", "name": self.tool, "input": self.tool_input}]
            stop = "tool_use"
        else:
            content, stop = [{"type": "text", "text": DONE_TEXT}], "end_turn"
        return {
            "id": f"msg_fake_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _events(message: dict):
    """The server-sent events that stream `message`."""
    start = {**message, "content": [], "stop_reason": None}
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            empty = {**block, "input": {}}
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": empty}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield "message_delta", {"type": "message_delta", "delta": stop, "usage": {"output_tokens": 10}}
    yield "message_stop", {"type": "message_stop"}


class _Handler(BaseHTTPRequestHandler):
    model: FakeModel
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        path = self.path.split("?")[0]
        if ":" in path and "/models/" in path:
            return self._gemini(path.rsplit(":", 1)[1], raw)
        if path.endswith("/responses"):
            return self._responses(raw)
        if path.endswith("/messages/count_tokens"):
            return self._json({"input_tokens": 10})
        if not path.endswith("/messages"):
            return self._json({"type": "error", "error": {"type": "not_found_error", "message": path}}, 404)
        try:
            body = json.loads(raw)
        except ValueError:
            return self._json({"type": "error", "error": {"type": "invalid_request_error", "message": "not JSON"}}, 400)
        message = self.model.reply(body)
        if not body.get("stream"):
            return self._json(message)
        text = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in _events(message))
        self._send(text.encode(), "text/event-stream")

    def _responses(self, raw: bytes) -> None:
        try:
            body = json.loads(raw)
        except ValueError:
            return self._json({"error": {"message": "not JSON", "type": "invalid_request_error"}}, 400)
        response = self.model.responses_reply(body)
        if not body.get("stream"):
            return self._json(response)
        events = [("response.created", {"type": "response.created", "response": {**response, "output": [], "status": "in_progress"}})]
        for index, item in enumerate(response["output"]):
            events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": item}))
            events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}))
        events.append(("response.completed", {"type": "response.completed", "response": response}))
        text = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
        self._send(text.encode(), "text/event-stream")

    def _gemini(self, method: str, raw: bytes) -> None:
        try:
            body = json.loads(raw)
        except ValueError:
            return self._json({"error": {"code": 400, "message": "not JSON", "status": "INVALID_ARGUMENT"}}, 400)
        if method == "countTokens":
            return self._json({"totalTokens": 10})
        if method not in ("generateContent", "streamGenerateContent"):
            return self._json({"error": {"code": 404, "message": method, "status": "NOT_FOUND"}}, 404)
        answer = self.model.gemini_reply(body)
        if method == "generateContent":
            return self._json(answer)
        self._send(f"data: {json.dumps(answer)}\r\n\r\n".encode(), "text/event-stream")

    def do_GET(self) -> None:
        with self.model.lock:
            self.model.fetched.append(self.path)
        self._json({"type": "error", "error": {"type": "not_found_error", "message": self.path}}, 404)

    def _json(self, value: dict, status: int = 200) -> None:
        self._send(json.dumps(value).encode(), "application/json", status)

    def _send(self, data: bytes, kind: str, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
