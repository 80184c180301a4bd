import threading

from kenning.threads import LazyPool


def test_no_thread_until_first_use_then_one_pool_for_every_caller() -> None:
    pool = LazyPool(2, "kenning-test")
    assert pool._pool is None  # importing a module that owns one starts nothing
    seen: list[object] = []
    callers = [threading.Thread(target=lambda: seen.append(pool.get())) for _ in range(8)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    assert len({id(p) for p in seen}) == 1
    assert pool.get().submit(lambda: threading.current_thread().name).result().startswith("kenning-test")
