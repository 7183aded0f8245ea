"""Do input fingerprints tell different inputs apart, and does the cache reuse equal ones?"""
import numpy as np

from autograder.runtime.fingerprint import ResultCache, fingerprint
from autograder.runtime.sandbox.channel import Named


def test_equal_content_gives_equal_fingerprints_and_any_change_a_new_one():
    a = (np.arange(6.0).reshape(2, 3), np.array([1, 2], dtype=np.int32), 1e-6, Named("cubic"))
    same = (np.arange(6.0).reshape(2, 3), np.array([1, 2], dtype=np.int32), 1e-6, Named("cubic"))
    assert fingerprint(a) == fingerprint(same)
    variants = [
        (np.arange(6.0).reshape(3, 2),) + a[1:],                               # shape
        (np.arange(6.0).reshape(2, 3).astype(np.float32),) + a[1:],            # dtype
        (a[0] + 1e-12,) + a[1:],                                               # one value
        a[:1] + (np.array([1, 2], dtype=np.int64),) + a[2:],                   # integer dtype
        a[:3] + (Named("square"),),                                            # named function
        a[:3] + (Named("weighted_softplus", weights=np.array([0.5, 1.0])),),
        a[:2] + (1e-5,) + a[3:],
    ]
    prints = {fingerprint(v) for v in variants}
    assert fingerprint(a) not in prints and len(prints) == len(variants)


def test_opaque_values_are_not_fingerprinted():
    assert fingerprint((np.ones(2), object())) is None
    assert fingerprint((lambda x: x,)) is None
    assert fingerprint(np.array([None, 1], dtype=object)) is None


def test_cache_computes_once_per_key_and_evicts_the_oldest():
    cache, calls = ResultCache(max_entries=2), []
    f = lambda: None
    compute = lambda tag: (lambda: calls.append(tag) or tag)
    assert cache.get_or_compute(f, "k1", compute("a")) == "a"
    assert cache.get_or_compute(f, "k1", compute("b")) == "a"
    cache.get_or_compute(f, "k2", compute("c"))
    cache.get_or_compute(f, "k3", compute("d"))
    cache.get_or_compute(f, "k1", compute("e"))                 # evicted, computed again
    cache.get_or_compute(f, None, compute("f"))                 # no key: never cached
    cache.get_or_compute(f, None, compute("g"))
    assert calls == ["a", "c", "d", "e", "f", "g"]
