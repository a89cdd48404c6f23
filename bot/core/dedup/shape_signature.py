"""MinHash signatures of code-shape shingles for many records at once, and the LSH band tables over them.

The signature is datasketch's MinHash (affine32 scheme: SHA-1 32-bit hash, MurmurHash3 finalizer, affine
permutations from datasketch's own seeded parameters), computed for a batch in a few numpy operations
instead of one MinHash object per record: building one object draws its permutations again, which was most
of the old index build. The band tables use datasketch's band/row split for the threshold, keyed by the
bytes of each band, so a record is added or removed by touching only its own bands.
"""
from __future__ import annotations

from itertools import chain
from typing import cast

import numpy as np
from datasketch import MinHash, MinHashLSH
from datasketch.hashfunc import sha1_hash32

NUM_PERM = 64
SEED = 7
_CHUNK = 100_000  # shingles hashed per numpy step: bounds the temporary (chunk x NUM_PERM) matrix to 25 MB
_A, _B = (p.astype(np.uint32) for p in MinHash(num_perm=NUM_PERM, seed=SEED).permutations)
_EMPTY = np.full(NUM_PERM, np.iinfo(np.uint32).max, dtype=np.uint32)


_HASHES: dict[str, int] = {}  # records share most shingles (names are abstracted away): hash each once
_HASHES_MAX = 1 << 21


def _hashes(shingle_sets: list[frozenset[str]], total: int) -> np.ndarray:
    if len(_HASHES) > _HASHES_MAX:
        _HASHES.clear()
    for shingle in set(chain.from_iterable(shingle_sets)).difference(_HASHES):
        _HASHES[shingle] = sha1_hash32(shingle.encode("utf-8"))
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


class BandTables:
    """LSH: records whose signatures agree on every row of at least one band are candidates of each other.

    Most buckets hold one record; such a bucket is the slot itself rather than a set (a third of the memory).
    """

    def __init__(self, threshold: float) -> None:
        params = MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
        self.bands, self.rows = params.b, params.r
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
