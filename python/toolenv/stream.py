"""Tool calls batched over one ``CallTools`` stream (``AsyncClient(streaming=True)``).

The CallTool requests made in one turn of the event loop (a vector step's N
calls) go out together as ``CallToolsRequest`` messages of at most 64 calls
on one long-lived bidirectional stream, and each call's outcome comes back in
the matching response: a reply, or the error status unary CallTool would have
returned (same code, message, details and retry advice). The server plays
each call exactly as a unary CallTool, so the trajectories are the same; only
the per-call cost of a unary RPC is saved.
"""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List, Optional, Sequence, Tuple

import grpc

from toolenv.client import CallResult, pb, reply_result, status_result

__all__ = ["CallBatcher", "MAX_CALLS_PER_REQUEST", "outcome_result"]

#: Most calls in one CallToolsRequest (the contract's limit on repeated fields).
MAX_CALLS_PER_REQUEST = 64

_CODE_NAMES = {code.value[0]: code.name for code in grpc.StatusCode}


def outcome_result(outcome: pb.CallOutcome) -> CallResult:
    """A CallOutcome as the :class:`CallResult` the unary call would have given."""
    if outcome.WhichOneof("outcome") == "reply":
        return reply_result(outcome.reply)
    status = outcome.status
    pushback = status.retry_pushback_ms if status.HasField("retry_pushback_ms") else None
    return status_result(_CODE_NAMES.get(status.code, "UNKNOWN"), status.message, status.details, pushback)


def _failed(code: str, message: str) -> CallResult:
    return status_result(code, message, b"", None)


def chunks(requests: Sequence[Tuple[pb.CallToolRequest, Any]]) -> List[List[Tuple[pb.CallToolRequest, Any]]]:
    """Splits calls into requests of at most 64, each episode at most once per request, in order."""
    out: List[List[Tuple[pb.CallToolRequest, Any]]] = []
    current: List[Tuple[pb.CallToolRequest, Any]] = []
    episodes: set = set()
    for item in requests:
        episode = item[0].episode_id
        if len(current) == MAX_CALLS_PER_REQUEST or episode in episodes:
            out.append(current)
            current, episodes = [], set()
        current.append(item)
        episodes.add(episode)
    if current:
        out.append(current)
    return out


class CallBatcher:
    """Sends the CallTool requests of one event-loop turn as CallTools batches on one stream."""

    def __init__(self, stub: Any, metadata: Sequence, timeout: Optional[float]):
        self._stub, self._metadata, self._timeout = stub, tuple(metadata), timeout
        self._call: Any = None
        self._reader: Optional[asyncio.Task] = None
        self._pending: List[Tuple[pb.CallToolRequest, asyncio.Future]] = []
        self._waiting: Dict[int, List[asyncio.Future]] = {}
        self._tag = 0
        self._write_lock: Optional[asyncio.Lock] = None
        self._flushes: set = set()

    async def call(self, request: pb.CallToolRequest) -> CallResult:
        """One call, sent with the others of this loop turn; its outcome as a :class:`CallResult`."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        if not self._pending:
            loop.call_soon(self._schedule_flush)
        self._pending.append((request, future))
        return await future

    @staticmethod
    def _expire(futures: Sequence[asyncio.Future]) -> None:
        """The deadline of a batch: its calls still unanswered fail as DEADLINE_EXCEEDED (one timer per batch)."""
        for future in futures:
            if not future.done():
                future.set_result(_failed("DEADLINE_EXCEEDED", "no reply on the CallTools stream within the client's timeout"))

    def _schedule_flush(self) -> None:
        task = asyncio.ensure_future(self._flush())
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if self._timeout is not None:
            asyncio.get_running_loop().call_later(self._timeout, self._expire, [future for _, future in pending])
        if self._write_lock is None:
            self._write_lock = asyncio.Lock()
        async with self._write_lock:
            try:
                if self._call is None:
                    self._call = self._stub.CallTools(metadata=self._metadata)
                    self._reader = asyncio.ensure_future(self._read(self._call))
                for batch in chunks(pending):
                    self._tag += 1
                    self._waiting[self._tag] = [future for _, future in batch]
                    await self._call.write(pb.CallToolsRequest(tag=self._tag, calls=[request for request, _ in batch]))
            except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError) as error:
                self._fail(pending, error)
                self._call = None

    async def _read(self, call: Any) -> None:
        error: Optional[BaseException] = None
        try:
            while True:
                response = await call.read()
                if response is grpc.aio.EOF:
                    break
                for future, outcome in zip(self._waiting.pop(response.tag, []), response.outcomes):
                    if not future.done():
                        future.set_result(outcome_result(outcome))
        except grpc.aio.AioRpcError as failure:
            error = failure
        if self._call is call:
            self._call = None
        waiting, self._waiting = self._waiting, {}
        for futures in waiting.values():
            for future in futures:
                if not future.done():
                    future.set_result(self._stream_failure(error))

    def _fail(self, pending: Sequence[Tuple[pb.CallToolRequest, asyncio.Future]], error: BaseException) -> None:
        for _, future in pending:
            if not future.done():
                future.set_result(self._stream_failure(error))

    @staticmethod
    def _stream_failure(error: Optional[BaseException]) -> CallResult:
        if isinstance(error, grpc.aio.AioRpcError):
            return _failed(error.code().name, f"the CallTools stream failed: {error.details()}")
        return _failed("UNAVAILABLE", "the CallTools stream ended before this call's reply")

    async def close(self) -> None:
        """Ends the stream (calls already sent are answered first)."""
        if self._call is not None:
            try:
                await self._call.done_writing()
            except (grpc.aio.AioRpcError, grpc.aio.UsageError):
                pass
        if self._reader is not None:
            try:
                await asyncio.wait_for(self._reader, 5)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self._reader.cancel()
