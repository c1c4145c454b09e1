"""Server-Timing header: where a request's time went, for operators and benchmarks.

With ``SERVER_TIMING=1`` in the environment every response carries

    Server-Timing: app;dur=12.1, cpu;dur=7.9, db;dur=3.0;desc="6 queries"

``app`` is the wall time inside Django (middleware and view), ``cpu`` the CPU time of the
thread that served it, ``db`` the wall time spent in database calls. A request whose
``app`` is much larger than ``cpu + db`` waited for something else: a CPU that another
process held, the GIL held by another thread, a lock. Browsers show the header in their
developer tools; ``benchmarks/`` reads it to split latency. Off by default: it costs a
few microseconds per query.
"""

from __future__ import annotations

import time

from django.db import connections


class _QueryClock:
    def __init__(self):
        self.seconds = 0.0
        self.count = 0

    def __call__(self, execute, sql, params, many, context):
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.seconds += time.perf_counter() - start
            self.count += 1


class ServerTimingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        clock = _QueryClock()
        wall, cpu = time.perf_counter(), time.thread_time()
        wrappers = [c.execute_wrapper(clock) for c in connections.all(initialized_only=False)]
        for w in wrappers:
            w.__enter__()
        try:
            response = self.get_response(request)
        finally:
            for w in reversed(wrappers):
                w.__exit__(None, None, None)
        app_ms = (time.perf_counter() - wall) * 1000
        cpu_ms = (time.thread_time() - cpu) * 1000
        response["Server-Timing"] = (
            f"app;dur={app_ms:.1f}, cpu;dur={cpu_ms:.1f}, "
            f'db;dur={clock.seconds * 1000:.1f};desc="{clock.count} queries"'
        )
        return response
