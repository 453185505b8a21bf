"""When a failed request is sent again, and after how long (pure rules; the session applies them).

Answers 429 and 503 are refusals the service gives when it is busy or a dependency is away. A
request is repeated only when repeating it cannot do anything twice: reads (GET, HEAD) and the
idempotent PUT/DELETE always; a POST or PATCH only when the error proves nothing was written
(the service refused it before doing anything, or an insert reports ``inserted_count: 0`` with no
unconfirmed ids). The wait is the server's ``Retry-After`` when it sends one, else an exponential
backoff with jitter. A login's ``429 throttled`` is never repeated: it answers a wrong password.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Optional

from .errors import CybercomError, ServiceUnavailable, Throttled

IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})

# Codes the service answers before it touches the database or the broker.
_REFUSED_BEFORE_WORK = frozenset(
    {"too_many_heavy_queries", "heavy_queries_busy", "throttled", "broker_unavailable"}
)


def nothing_written(error: CybercomError) -> bool:
    """True when an error answer proves the request changed nothing."""
    if error.code in _REFUSED_BEFORE_WORK:
        return True
    detail = error.detail
    if isinstance(detail, dict):
        if "task_id" in detail:  # a submission whose broker confirm was lost: it may run
            return False
        if detail.get("inserted_count") == 0 and not detail.get("unconfirmed_ids"):
            return True
    return False


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` is the total number of tries (1 = never retry)."""

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0

    def should_retry(self, method: str, error: CybercomError, attempt: int) -> bool:
        """``attempt`` counts from 1 (the try that just failed)."""
        if attempt >= self.attempts or not isinstance(error, (Throttled, ServiceUnavailable)):
            return False
        if error.status not in (429, 503):
            return False
        if isinstance(error, Throttled) and error.code == "throttled":
            # The login throttle answers a wrong password so while it slows guessing (the right
            # one is never refused): sending the same password again cannot succeed.
            return False
        return method.upper() in IDEMPOTENT_METHODS or nothing_written(error)

    def should_retry_connection(self, method: str, attempt: int) -> bool:
        """A connection that failed before an answer: only requests safe to repeat."""
        return attempt < self.attempts and method.upper() in IDEMPOTENT_METHODS

    def delay(
        self, attempt: int, retry_after: Optional[float] = None, *, jitter: Optional[float] = None
    ) -> float:
        """Seconds to wait before try ``attempt + 1``; ``jitter`` in [0, 1] (random when omitted)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        fraction: float = random.random() if jitter is None else jitter
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return backoff * (0.5 + 0.5 * fraction)


NO_RETRY = RetryPolicy(attempts=1)
