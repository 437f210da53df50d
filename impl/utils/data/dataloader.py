"""DataLoader (single process) and its default collate: batches drawn and put together as
torch's DataLoader draws and collates them."""

from __future__ import annotations

import collections.abc
import copy
import itertools
import math
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from impl import _random, dtypes
from impl._creation import as_tensor, tensor
from impl._ops.stacking import stack
from impl._tensor import Tensor
from impl.utils.data.dataset import IterableDataset
from impl.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler

_COLLATE_ERROR = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)
_STRINGS = re.compile(r"[SaUO]")  # numpy arrays of strings or objects: collated by no rule


def _rebuilt(elem: Any, values: Any, mutable: type) -> Any:
    """``values`` in a container like ``elem``: a copy of a mutable one filled in, else its type
    called on them; a plain dict or list where the type refuses."""
    try:
        if isinstance(elem, mutable):
            clone = copy.copy(elem)
            if isinstance(values, dict):
                clone.update(values)
            else:
                clone[:] = values
            return clone
        return type(elem)(values)
    except TypeError:
        return dict(values) if isinstance(values, dict) else list(values)


def default_collate(batch: Any) -> Any:
    """torch's default_collate: tensors stacked along a new first dim, numpy arrays and scalars
    made tensors, floats a float64 tensor, ints (and bools) a tensor, strings left as a list, and
    mappings, namedtuples and sequences collated per key or position."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, np.ndarray) and not isinstance(elem, np.generic):
        if _STRINGS.search(elem.dtype.str) is not None:
            raise TypeError(_COLLATE_ERROR.format(elem.dtype))
        return default_collate([as_tensor(b) for b in batch])
    if isinstance(elem, (np.bool_, np.number, np.object_)):
        return as_tensor(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        values = {key: default_collate([d[key] for d in batch]) for key in elem}
        return _rebuilt(elem, values, collections.abc.MutableMapping)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return type(elem)(*(default_collate(samples) for samples in zip(*batch, strict=False)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        collated = [default_collate(samples) for samples in zip(*batch, strict=False)]
        return (
            collated if isinstance(elem, tuple) else _rebuilt(elem, collated, collections.abc.MutableSequence)
        )
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def default_convert(data: Any) -> Any:
    """torch's default_convert (the collate without batching): numpy arrays and scalars made
    tensors, containers converted per element, anything else left as it is."""
    if isinstance(data, np.ndarray) and not isinstance(data, np.generic):
        return data if _STRINGS.search(data.dtype.str) is not None else as_tensor(data)
    if isinstance(data, (np.bool_, np.number)):
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuilt(
            data, {k: default_convert(v) for k, v in data.items()}, collections.abc.MutableMapping
        )
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuilt(data, [default_convert(d) for d in data], collections.abc.MutableSequence)
    return data


def get_worker_info() -> None:
    """None: impl loads every batch in the main process."""
    return None


class _InfiniteConstantSampler:
    """An IterableDataset's sampler: None forever (the dataset's own iterator gives the samples)."""

    def __iter__(self) -> Iterator[None]:
        return itertools.repeat(None)


class DataLoader:
    """torch's DataLoader, loading in the main process: its sampler (RandomSampler with
    ``shuffle``, on ``generator``), its BatchSampler, its collate, and the base seed it draws
    from ``generator`` (or the global stream) whenever an iterator starts, as torch draws it, so
    the batches and the numbers drawn after them are torch's. With ``num_workers`` > 0 the
    batches are the ones torch's workers give, loaded here in the main process."""

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Any = None,
        batch_sampler: Any = None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to "
                "enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = 2 if num_workers > 0 and prefetch_factor is None else prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.persistent_workers = persistent_workers
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                    f"but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                    "drop_last"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            else:
                sampler = (
                    RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
                )
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> _LoaderIter:
        return _LoaderIter(self)

    def __len__(self) -> int:
        if self._iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


class _LoaderIter:
    """One pass over a DataLoader: the base seed drawn at once (torch's workers seed from it), the
    sampler's indices on demand."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._indices = iter(loader._index_sampler)
        self._base_seed = int(_random.random_full((), np.dtype(np.int64), gen=loader.generator))
        self._dataset_iter = iter(loader.dataset) if loader._iterable else None
        self._ended = False
        self._num_yielded = 0

    def __iter__(self) -> _LoaderIter:
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def __next__(self) -> Any:
        index = next(self._indices)
        loader = self._loader
        if self._dataset_iter is not None:
            data = self._next_samples(index)
        elif not loader._auto_collation:
            data = loader.dataset[index]
        elif callable(getattr(loader.dataset, "__getitems__", None)):
            data = loader.dataset.__getitems__(index)
        else:
            data = [loader.dataset[i] for i in index]
        self._num_yielded += 1
        return loader.collate_fn(data)

    def _next_samples(self, index: Any) -> Any:
        """The next sample (or batch of samples) of an IterableDataset's iterator."""
        if self._ended:
            raise StopIteration
        if not self._loader._auto_collation:
            return next(self._dataset_iter)
        data = list(itertools.islice(self._dataset_iter, len(index)))
        self._ended = len(data) < len(index)
        if not data or (self._loader.drop_last and self._ended):
            raise StopIteration
        return data
