"""The collector is kept off a run's hot path and handed back as it was."""

import gc
import threading

from dealroom._util.heap import YOUNG_THRESHOLD, quiet_collector, settle


def test_a_block_raises_the_young_threshold_and_restores_it():
    before = gc.get_threshold()
    with quiet_collector():
        assert gc.get_threshold()[0] == max(YOUNG_THRESHOLD, before[0])
        assert gc.get_threshold()[1:] == before[1:]
    assert gc.get_threshold() == before


def test_settle_freezes_inside_a_block_and_the_end_unfreezes():
    assert gc.get_freeze_count() == 0
    settle()
    assert gc.get_freeze_count() == 0, "outside a block nothing is frozen"
    with quiet_collector():
        kept = [object() for _ in range(100)]  # noqa: F841 - live objects to freeze
        settle()
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_overlapping_blocks_restore_once_the_last_closes():
    before = gc.get_threshold()
    entered, release = threading.Event(), threading.Event()

    def other_run():
        with quiet_collector():
            entered.set()
            release.wait(5)

    worker = threading.Thread(target=other_run)
    worker.start()
    entered.wait(5)
    with quiet_collector():
        settle()
    assert gc.get_threshold() != before and gc.get_freeze_count() > 0, "the other run is open"
    release.set()
    worker.join(5)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_garbage_made_during_a_block_is_still_collected():
    class Node:
        pass

    with quiet_collector():
        settle()
        a, b = Node(), Node()
        a.other, b.other = b, a
        del a, b
        assert gc.collect() >= 2
