"""Requests sent at the same moment from real threads, each on its own database connection,
for the races the security tests reproduce (PostgreSQL only: SQLite serialises writers)."""

import threading

from django.db import connection


def at_once(n: int, call, timeout: float = 90) -> list:
    """call(k) for k in 0..n-1, all released together; each result, or the repr of what
    the call raised."""
    barrier = threading.Barrier(n)
    results: list = [None] * n

    def run(k):
        try:
            barrier.wait()
            results[k] = call(k)
        except Exception as exc:  # reported in the results
            results[k] = repr(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    return results
