"""An episode's tools, called with the retries a production client makes."""

from __future__ import annotations

import json
import time
from typing import Any, Mapping, Optional

from toolenv.client import CallResult, Client, pb

__all__ = ["Tools", "TRANSIENT", "MAX_ATTEMPTS"]

#: Status codes a retry may get past.
TRANSIENT = {"UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED"}
#: Codes of an answer the episode did not decide (no ``toolenv-next-index``): the call's outcome is unknown.
OUTCOME_UNKNOWN = {"UNAVAILABLE", "UNKNOWN", "CANCELLED", "DEADLINE_EXCEEDED", "INTERNAL", "ABORTED"}
MAX_ATTEMPTS = 8


class Tools:
    """An episode's tools, called with retries that honour the server's advice.

    ``call`` retries what injected faults break the way a production client
    would: transient statuses (UNAVAILABLE, DEADLINE_EXCEEDED,
    RESOURCE_EXHAUSTED) after the server's ``grpc-retry-pushback-ms`` trailer
    (never after -1), declaring the wait in the episode's virtual milliseconds
    (``waited_ms``: at time scale 0 only a declared wait lets a rate-limit
    window pass); writes with an idempotency key so a retry cannot apply
    twice; a write whose reply is empty or cut short counts as unconfirmed.
    What is left (domain errors, bad calls, a suspension) goes back as text.
    """

    def __init__(self, client: Client, episode: pb.Episode):
        self.client, self.episode = client, episode
        self.mutating = {tool.name for tool in episode.tools if tool.mutates_state}
        self.time_scale = max(episode.time_scale, 0.0)
        self.calls = 0
        #: The index the next call takes (a created episode holds none); None once an answer did not say.
        self.next_index: Optional[int] = 0

    def call(self, tool: str, arguments: Optional[Mapping[str, Any]]) -> str:
        """Calls a tool; returns the text a model should read (a result, a domain error or a failure)."""
        self.calls += 1
        mutates = tool in self.mutating
        key = f"{self.episode.episode_id}-{self.calls}" if mutates else ""
        text, waited_ms = "", 0
        for attempt in range(MAX_ATTEMPTS):
            index = self.next_index
            result = self.client.call_tool(
                self.episode.episode_id, tool, arguments or {}, idempotency_key=key, waited_ms=waited_ms, expected_index=index
            )
            text = result.text
            if result.kind == "status" and result.next_index is None and index is not None and result.code in OUTCOME_UNKNOWN:
                # Not decided by the episode (the store unavailable, the connection cut): the call may
                # or may not have been applied; the same index makes sending it again safe.
                self.backoff(attempt, result.retry_after_ms, None)
                continue
            self.next_index = result.next_index
            if result.kind == "status":
                if result.code not in TRANSIENT or (result.retry_after_ms is not None and result.retry_after_ms < 0):
                    return text  # a bad call, a suspension (PERMISSION_DENIED), a lost lease, "do not retry"
                waited_ms = self.backoff(attempt, result.retry_after_ms, result.retry_after_virtual_ms)
                continue
            if result.kind == "domain_error":
                return text
            fault = result.in_band_fault()
            if fault is not None:  # a fault delivered in-band, as an error object in an OK reply
                if fault.get("code") == "PERMISSION_DENIED" or fault.get("retry_after_ms") == -1:
                    return text
                waited_ms = self.backoff(attempt, fault.get("retry_after_ms"), fault.get("retry_after_virtual_ms"))
                continue
            if mutates and not self.confirmed(text):
                waited_ms = self.backoff(attempt, None, None)  # unconfirmed write: the key makes the retry safe
                continue
            return text
        return text

    @staticmethod
    def confirmed(text: str) -> bool:
        try:
            value = json.loads(text)
        except ValueError:
            return False  # cut short
        return value != {}

    def backoff(self, attempt: int, pushback_ms: Optional[int], virtual_ms: Optional[int]) -> int:
        """Waits as advised (already in real time), else 1, 2, 4 … ms in the episode's time scale;
        returns the wait in the episode's virtual milliseconds, to declare with the retry."""
        if virtual_ms is None:
            virtual_ms = 2 ** min(attempt, 7)
            if pushback_ms is not None and self.time_scale > 0:
                virtual_ms = round(pushback_ms / self.time_scale)
        seconds = pushback_ms / 1000 if pushback_ms is not None else virtual_ms / 1000 * self.time_scale
        if seconds > 0:
            time.sleep(seconds)
        return max(int(virtual_ms), 0)
