#!/usr/bin/env python3
"""A fake LLM server for warden's tests: real HTTP on 127.0.0.1, speaking
both streaming APIs the broker uses.

    python3 tests/fakes/llm_server.py SCRIPT.json [--port 0] [--log FILE] [--idle 120]

It binds 127.0.0.1 (port 0 = any free port), prints the port on the first
line of stdout, and exits by itself after --idle seconds without a request
(default 120), or on SIGTERM/SIGINT.  Use it with
    warden chat --model openai/fake --api-base http://127.0.0.1:PORT/v1
    warden chat --model anthropic/fake --api-base http://127.0.0.1:PORT/v1

Endpoints: POST /v1/chat/completions (OpenAI, also /chat/completions),
POST /v1/messages (Anthropic, also /messages), GET /v1/models.  Both POST
endpoints stream server-sent events when the request says "stream": true
and answer with one JSON body otherwise.

SCRIPT is a JSON array of responses, served in order, one per POST (whichever
endpoint); once it is used up every POST gets 500 "fake server: script
exhausted".  Each response is an object:

  {"text": "Hello"}                      streamed as text, in chunks
  {"tool_call": {"language": "python", "code": "print(1)"},
   "text": "optional prose before"}      a tool call of execute(), its
                                         arguments streamed in fragments
  {"tool_calls": [{..}, {..}]}           several calls in one reply
  {"raw_tool": {"name": "python", "arguments": "print(1)"}}
                                         a tool call with any name and any
                                         arguments text (for the repairs);
                                         Anthropic gets it as input JSON
  {"fenced": "text with a ```python block```"}      plain text (= "text")
  {"fenced": {"language": "python", "code": "print(1)"}, "text": "prose"}
                                         prose + a fenced block as text
  {"status": 429, "retry_after": 1}      an HTTP error with the provider's
  {"status": 500}                        error JSON body; optional
                                         "message": "...", and "echo_key":
                                         true puts the received API key into
                                         the message (a leak test)
  {"malformed": true, "text": "partial"} streams the text, then an event
                                         that is not valid JSON
  {"disconnect_after": 2, "text": "..."} cuts the connection (no final
                                         chunk) after 2 content chunks
  {"stream_error": "Overloaded", "text": "partial"}
                                         an error event inside the stream
  {"slow_ms": 200, "text": "..."}        pauses between chunks
  {"stall_ms": 3000, "text": "..."}      sends one chunk, then nothing for
                                         stall_ms (idle-timeout tests)
  {"no_done": true, "text": "..."}       ends the stream cleanly but without
                                         [DONE] / message_stop
Common options: "chunk": N  characters per text chunk (default 4),
"model": the model name echoed back.

Every request is appended to --log FILE as one JSON line:
  {"n": 1, "method": "POST", "path": "/v1/chat/completions",
   "headers": {"authorization": "Bearer ...", ...}, "body": {...}}
Header values are recorded as received (API keys included) so that a test
can check what was sent; it is warden's own output that must never show a
key.  Each SSE event is written in two TCP writes split mid-line, so the
client's parser sees partial lines.
"""
import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = {"script": [], "next": 0, "n": 0, "last": time.monotonic(), "log": None}
LOCK = threading.Lock()


def chunks(s, n):
    n = max(1, int(n))
    return [s[i:i + n] for i in range(0, len(s), n)] or []


def fenced_text(resp):
    f = resp.get("fenced")
    if isinstance(f, str):
        return resp.get("text", "") + f
    if isinstance(f, dict):
        pre = resp.get("text", "")
        if pre:
            pre += "\n\n"
        return "%s```%s\n%s\n```\n" % (pre, f.get("language", "python"), f.get("code", ""))
    return resp.get("text", "")


def calls_of(resp):
    """[(name, arguments-text)] of a response."""
    out = []
    tcs = resp.get("tool_calls") or ([resp["tool_call"]] if "tool_call" in resp else [])
    for tc in tcs:
        out.append(("execute", json.dumps({"language": tc.get("language", "python"),
                                           "code": tc.get("code", "")})))
    if "raw_tool" in resp:
        rt = resp["raw_tool"]
        a = rt.get("arguments", "")
        out.append((rt.get("name", "execute"), a if isinstance(a, str) else json.dumps(a)))
    return out


class Cut(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-llm/1"

    def log_message(self, fmt, *args):
        pass

    # -- plumbing --
    def send_chunk(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def sse(self, data, event=None):
        text = ""
        if event:
            text += "event: %s\n" % event
        text += "data: %s\n\n" % data
        half = len(text) // 2
        self.send_chunk(text[:half])
        self.send_chunk(text[half:])

    def content_step(self):
        """Called before each content chunk: pacing and cuts."""
        r = self.resp
        self.sent += 1
        if "disconnect_after" in r and self.sent > int(r["disconnect_after"]):
            raise Cut()
        if self.sent > 1 and r.get("slow_ms"):
            time.sleep(r["slow_ms"] / 1000.0)
        if self.sent == 2 and r.get("stall_ms"):
            time.sleep(r["stall_ms"] / 1000.0)

    def cut(self):
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.close_connection = True

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def end_stream(self):
        self.send_chunk(b"")

    def json_reply(self, status, obj, extra=None):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    # -- requests --
    def do_GET(self):
        with LOCK:
            STATE["last"] = time.monotonic()
        if self.path.rstrip("/").endswith("/models"):
            self.json_reply(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        else:
            self.json_reply(404, {"error": {"message": "no such path: " + self.path}})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with LOCK:
            STATE["last"] = time.monotonic()
            STATE["n"] += 1
            entry = {"n": STATE["n"], "method": "POST", "path": self.path,
                     "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body}
            if STATE["log"]:
                with open(STATE["log"], "a") as f:
                    f.write(json.dumps(entry) + "\n")
            i = STATE["next"]
            STATE["next"] += 1
            resp = STATE["script"][i] if i < len(STATE["script"]) else None
        path = self.path.split("?")[0].rstrip("/")
        anthropic = path.endswith("/messages")
        if not anthropic and not path.endswith("/chat/completions"):
            self.json_reply(404, {"error": {"message": "no such path: " + self.path}})
            return
        if resp is None:
            resp = {"status": 500, "message": "fake server: script exhausted"}
        self.resp, self.sent = resp, 0
        self.model = resp.get("model") or (body.get("model") if isinstance(body, dict) else None) or "fake"
        if "status" in resp:
            self.error_reply(resp, anthropic)
            return
        stream = isinstance(body, dict) and body.get("stream") is True
        try:
            if anthropic:
                self.anthropic(resp, stream)
            else:
                self.openai(resp, stream)
        except Cut:
            self.cut()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def error_reply(self, resp, anthropic):
        st = int(resp["status"])
        msg = resp.get("message") or {429: "Rate limit reached, slow down",
                                      500: "The server had an error",
                                      401: "Incorrect API key provided"}.get(st, "error %d" % st)
        if resp.get("echo_key"):
            key = self.headers.get("x-api-key") or (self.headers.get("authorization") or "").replace("Bearer ", "")
            msg += ": " + key
        extra = {}
        if "retry_after" in resp:
            extra["Retry-After"] = str(resp["retry_after"])
        if anthropic:
            typ = {429: "rate_limit_error", 401: "authentication_error", 529: "overloaded_error"}.get(st, "api_error")
            self.json_reply(st, {"type": "error", "error": {"type": typ, "message": msg}}, extra)
        else:
            self.json_reply(st, {"error": {"message": msg, "type": "fake_error", "code": st}}, extra)

    # -- OpenAI --
    def openai(self, resp, stream):
        text = fenced_text(resp)
        calls = calls_of(resp)
        if not stream:
            msg = {"role": "assistant", "content": text or None}
            if calls:
                msg["tool_calls"] = [{"id": "call_fake_%d" % i, "type": "function",
                                      "function": {"name": nm, "arguments": a}}
                                     for i, (nm, a) in enumerate(calls)]
            self.json_reply(200, {"id": "chatcmpl-fake", "object": "chat.completion",
                                  "model": self.model,
                                  "choices": [{"index": 0, "message": msg,
                                               "finish_reason": "tool_calls" if calls else "stop"}]})
            return

        def ev(delta, finish=None):
            return json.dumps({"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                               "created": 0, "model": self.model,
                               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        self.start_stream()
        self.sse(ev({"role": "assistant", "content": ""}))
        for piece in chunks(text, resp.get("chunk", 4)):
            self.content_step()
            self.sse(ev({"content": piece}))
        if resp.get("malformed"):
            self.sse('{"id": "chatcmpl-fake", "choices": [{"delta": {"content": "oops"')
            self.end_stream()
            return
        if resp.get("stream_error"):
            self.sse(json.dumps({"error": {"message": resp["stream_error"], "type": "server_error"}}))
            self.end_stream()
            return
        for i, (name, args) in enumerate(calls):
            self.content_step()
            self.sse(ev({"tool_calls": [{"index": i, "id": "call_fake_%d" % i, "type": "function",
                                         "function": {"name": name, "arguments": ""}}]}))
            for frag in chunks(args, resp.get("chunk", 7)):
                self.content_step()
                self.sse(ev({"tool_calls": [{"index": i, "function": {"arguments": frag}}]}))
        if resp.get("no_done"):
            self.end_stream()
            return
        self.sse(ev({}, "tool_calls" if calls else "stop"))
        self.sse("[DONE]")
        self.end_stream()

    # -- Anthropic --
    def anthropic(self, resp, stream):
        text = fenced_text(resp)
        calls = calls_of(resp)

        def inp(a):
            try:
                v = json.loads(a)
                return v if isinstance(v, dict) else {"code": v}
            except ValueError:
                return {"code": a}
        if not stream:
            content = []
            if text:
                content.append({"type": "text", "text": text})
            for i, (nm, a) in enumerate(calls):
                content.append({"type": "tool_use", "id": "toolu_fake_%d" % i, "name": nm, "input": inp(a)})
            self.json_reply(200, {"id": "msg_fake", "type": "message", "role": "assistant",
                                  "model": self.model, "content": content,
                                  "stop_reason": "tool_use" if calls else "end_turn"})
            return

        def ev(name, obj):
            obj = dict(obj)
            obj["type"] = name
            self.sse(json.dumps(obj), event=name)
        self.start_stream()
        ev("message_start", {"message": {"id": "msg_fake", "type": "message", "role": "assistant",
                                         "content": [], "model": self.model, "stop_reason": None,
                                         "usage": {"input_tokens": 1, "output_tokens": 0}}})
        ev("ping", {})
        idx = 0
        if text or not calls:
            ev("content_block_start", {"index": idx, "content_block": {"type": "text", "text": ""}})
            for piece in chunks(text, resp.get("chunk", 4)):
                self.content_step()
                ev("content_block_delta", {"index": idx, "delta": {"type": "text_delta", "text": piece}})
            if resp.get("malformed"):
                self.sse('{"type": "content_block_delta", "index": 0, "delta": {"type": "text_de',
                         event="content_block_delta")
                self.end_stream()
                return
            if resp.get("stream_error"):
                ev("error", {"error": {"type": "overloaded_error", "message": resp["stream_error"]}})
                self.end_stream()
                return
            ev("content_block_stop", {"index": idx})
            idx += 1
        for i, (name, args) in enumerate(calls):
            self.content_step()
            ev("content_block_start", {"index": idx, "content_block": {
                "type": "tool_use", "id": "toolu_fake_%d" % i, "name": name, "input": {}}})
            for frag in chunks(json.dumps(inp(args)), resp.get("chunk", 7)):
                self.content_step()
                ev("content_block_delta", {"index": idx, "delta": {"type": "input_json_delta",
                                                                   "partial_json": frag}})
            ev("content_block_stop", {"index": idx})
            idx += 1
        if resp.get("no_done"):
            self.end_stream()
            return
        ev("message_delta", {"delta": {"stop_reason": "tool_use" if calls else "end_turn",
                                       "stop_sequence": None}, "usage": {"output_tokens": 1}})
        ev("message_stop", {})
        self.end_stream()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a client that hangs up mid-stream (cancel, a parse error) is normal
        if isinstance(sys.exc_info()[1], OSError):
            return
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description="fake LLM server for warden's tests")
    ap.add_argument("script", help="JSON array of scripted responses")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", help="append each request as a JSON line here")
    ap.add_argument("--idle", type=float, default=120, help="exit after this many idle seconds")
    a = ap.parse_args()
    with open(a.script) as f:
        script = json.load(f)
    if not isinstance(script, list):
        sys.exit("llm_server: the script must be a JSON array of responses")
    STATE["script"] = script
    STATE["log"] = a.log
    srv = Server(("127.0.0.1", a.port), Handler)

    def bye(*_):
        os._exit(0)
    signal.signal(signal.SIGTERM, bye)
    signal.signal(signal.SIGINT, bye)

    def watchdog():
        while True:
            time.sleep(0.5)
            with LOCK:
                idle = time.monotonic() - STATE["last"]
            if idle > a.idle:
                os._exit(0)
    threading.Thread(target=watchdog, daemon=True).start()
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
