"""MinHash signatures of code-shape shingles for many records at once, and the LSH band tables over them.

The signature is datasketch's MinHash (affine32 scheme: SHA-1 32-bit hash, MurmurHash3 finalizer, affine
permutations drawn as datasketch draws them), computed for a batch in a few numpy operations instead of one
MinHash object per record. The band tables use datasketch's band/row split for the threshold, keyed by the
bytes of each band, so a record is added or removed by touching only its own bands. The few parameters are
ported here (datasketch pulls in scipy, 113 MB, for one integral); tests keep datasketch as the oracle.
"""
from __future__ import annotations

import hashlib
from itertools import chain
from typing import cast

import numpy as np

NUM_PERM = 64
SEED = 7
_CHUNK = 100_000  # shingles hashed per numpy step: bounds the temporary (chunk x NUM_PERM) matrix to 25 MB


def _permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's affine32 draw: h -> a*h + b mod 2^32 with an odd `a` (a bijection), from a seeded generator."""
    gen = np.random.RandomState(seed)
    a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    return a, b


_A, _B = _permutations(NUM_PERM, SEED)
_EMPTY = np.full(NUM_PERM, np.iinfo(np.uint32).max, dtype=np.uint32)


_HASHES: dict[str, int] = {}  # records share most shingles (names are abstracted away): hash each once
_HASHES_MAX = 1 << 21


def _hashes(shingle_sets: list[frozenset[str]], total: int) -> np.ndarray:
    if len(_HASHES) > _HASHES_MAX:
        _HASHES.clear()
    for shingle in set(chain.from_iterable(shingle_sets)).difference(_HASHES):
        _HASHES[shingle] = int.from_bytes(hashlib.sha1(shingle.encode("utf-8")).digest()[:4], "little")
    return np.fromiter(map(_HASHES.__getitem__, chain.from_iterable(shingle_sets)), dtype=np.uint32, count=total)


def _fmix32(hv: np.ndarray) -> np.ndarray:
    hv = hv ^ (hv >> np.uint32(16))
    hv = hv * np.uint32(0x85EBCA6B)
    hv = hv ^ (hv >> np.uint32(13))
    hv = hv * np.uint32(0xC2B2AE35)
    return hv ^ (hv >> np.uint32(16))


def signatures(shingle_sets: list[frozenset[str]]) -> np.ndarray:
    """One row of NUM_PERM uint32 per set (all-max for an empty set), equal to datasketch's MinHash."""
    # Signatures run along columns while computing: reducing along contiguous memory is 4x faster.
    out = np.tile(_EMPTY[:, None], (1, len(shingle_sets)))
    lengths = np.fromiter((len(s) for s in shingle_sets), dtype=np.int64, count=len(shingle_sets))
    rows_arr = np.repeat(np.arange(len(shingle_sets)), lengths)
    hv_all = _fmix32(_hashes(shingle_sets, int(lengths.sum())))
    with np.errstate(over="ignore"):
        for start in range(0, len(hv_all), _CHUNK):
            permuted = np.multiply.outer(_A, hv_all[start:start + _CHUNK])  # wraps modulo 2^32, as affine32 does
            permuted += _B[:, None]
            rows_here = rows_arr[start:start + _CHUNK]
            # Rows come in runs (one per set); a run cut by the chunk edge is finished by the next chunk.
            starts = np.flatnonzero(np.r_[True, rows_here[1:] != rows_here[:-1]])
            owners = rows_here[starts]
            out[:, owners] = np.minimum(out[:, owners], np.minimum.reduceat(permuted, starts, axis=1))
    return np.ascontiguousarray(out.T)


def agreement(query: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Estimated Jaccard similarity of `query` with each row: the share of equal positions."""
    return np.count_nonzero(rows == query, axis=1) / NUM_PERM


def _integral(f: np.ndarray, xs: np.ndarray) -> float:
    return float(np.sum((f[1:] + f[:-1]) * np.diff(xs)) / 2)


def band_split(threshold: float, num_perm: int) -> tuple[int, int]:
    """(bands, rows) minimising the equal-weighted false positive and false negative areas, as MinHashLSH does.

    datasketch integrates with scipy's `quad`; the trapezoid rule on 4,001 points agrees within 3e-7, far below the
    gaps between the candidate splits' errors.
    """
    best, opt = float("inf"), (0, 0)
    below, above = np.linspace(0.0, threshold, 4001), np.linspace(threshold, 1.0, 4001)
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            false_pos = _integral(1 - (1 - below ** rows) ** bands, below)
            false_neg = _integral((1 - above ** rows) ** bands, above)
            if (error := 0.5 * false_pos + 0.5 * false_neg) < best:
                best, opt = error, (bands, rows)
    return opt


class BandTables:
    """LSH: records whose signatures agree on every row of at least one band are candidates of each other.

    Most buckets hold one record; such a bucket is the slot itself rather than a set (a third of the memory).
    """

    def __init__(self, threshold: float) -> None:
        self.bands, self.rows = band_split(threshold, NUM_PERM)
        self.tables: list[dict[bytes, int | set[int]]] = [{} for _ in range(self.bands)]

    def _keys(self, sigs: np.ndarray) -> list[list[bytes]]:
        width = np.dtype((np.void, self.rows * sigs.itemsize))
        # A void-dtype array lists its items as bytes; numpy's stubs allow any of its item types.
        return [cast(list[bytes], np.ascontiguousarray(sigs[:, band * self.rows:(band + 1) * self.rows])
                     .view(width).ravel().tolist())
                for band in range(self.bands)]

    def add(self, slots: list[int], sigs: np.ndarray) -> None:
        for table, keys in zip(self.tables, self._keys(sigs), strict=True):
            for slot, key in zip(slots, keys, strict=True):
                bucket = table.setdefault(key, slot)
                if bucket is slot:
                    continue
                if isinstance(bucket, int):
                    table[key] = {bucket, slot}
                else:
                    bucket.add(slot)

    def remove(self, slot: int, sig: np.ndarray) -> None:
        for table, (key,) in zip(self.tables, self._keys(sig[None, :]), strict=True):
            bucket = table.get(key)
            if bucket == slot:
                del table[key]
            elif isinstance(bucket, set):
                bucket.discard(slot)
                if len(bucket) == 1:
                    table[key] = bucket.pop()

    def query(self, sig: np.ndarray) -> set[int]:
        found: set[int] = set()
        for table, (key,) in zip(self.tables, self._keys(sig[None, :]), strict=True):
            bucket = table.get(key)
            if isinstance(bucket, int):
                found.add(bucket)
            elif bucket is not None:
                found |= bucket
        return found
