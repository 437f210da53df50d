"""Planted faults that break the random stream and torch.utils.data (rules RNG-001, DATA-*)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from impl_faults import fault, patched


@fault({"RNG-001": "stdout line", "DATA-001": "stdout line"})
def randperm_draws_modulo_n() -> Iterator[None]:
    """randperm's swap shuffle draws each position modulo n instead of n - i."""
    import numpy as np

    from impl import _random

    def make(original: Callable) -> Callable:
        def randperm(n: int, gen: Any = None) -> Any:
            g = gen or _random.default_generator
            perm = np.arange(n, dtype=np.int64)
            for i, z in enumerate((g.random32(max(n - 1, 0)) % np.uint64(max(n, 1))).tolist()):
                j = min(i + z, n - 1)
                perm[i], perm[j] = perm[j], perm[i]
            return perm

        return randperm

    with patched(_random, "randperm", make):
        yield


@fault({"RNG-001": "stdout line"})
def randint_wide_draws_from_2_32() -> Iterator[None]:
    """randint takes 64-bit draws only from a range of 2**32 (torch: from 2**28)."""
    import numpy as np

    from impl import _random

    def make(original: Callable) -> Callable:
        def randint(low: int, high: int, shape: tuple, dtype: Any, gen: Any = None) -> Any:
            if high - low >= 2**32:
                return original(low, high, shape, dtype, gen)
            g = gen or _random.default_generator
            raw = g.random32(int(np.prod(shape))) % np.uint64(high - low)
            return (raw.astype(np.int64) + low).astype(dtype).reshape(shape)

        return randint

    with patched(_random, "randint", make):
        yield


@fault({"RNG-001": "stdout line"})
def multinomial_without_replacement_repeats() -> Iterator[None]:
    """multinomial without replacement draws as with replacement (indices may repeat)."""
    from impl import _creation, _random

    def make(original: Callable) -> Callable:
        def multinomial(
            input: Any, num_samples: int, replacement: bool = False, *, generator: Any = None
        ) -> Any:
            probs = input.numpy()
            return _creation.tensor(_random.multinomial_with_replacement(probs, num_samples, generator))

        return multinomial

    import impl

    with patched(impl, "multinomial", make):
        yield


@fault({"RNG-001": "stdout line"})
def set_state_keeps_the_position() -> Iterator[None]:
    """Generator.set_state leaves the generator where it is (the saved draws are not replayed)."""
    from impl import _random

    with patched(_random.Generator, "set_state", lambda original: lambda self, state: self):
        yield


@fault({"RNG-001": "stdout line"})
def exponential_of_log_u() -> Iterator[None]:
    """exponential_ transforms a uniform u by -log(u) / lambda instead of -log1p(-u) / lambda."""
    import numpy as np

    from impl import _random

    def make(original: Callable) -> Callable:
        def exponential(shape: tuple, dtype: Any, lambd: float = 1.0, gen: Any = None) -> Any:
            u = (gen or _random.default_generator).uniform(int(np.prod(shape)), True)
            return (-np.log(u) / lambd).astype(dtype).reshape(shape)

        return exponential

    with patched(_random, "exponential", make):
        yield


@fault({"DATA-001": "stdout line"})
def shuffle_with_a_fresh_seed() -> Iterator[None]:
    """A RandomSampler without a generator seeds its own from the system's entropy instead of a
    draw of the global stream."""
    from impl import _random
    from impl.utils.data import sampler

    def own_generator() -> Any:
        generator = _random.Generator()
        generator.seed()
        return generator

    with patched(sampler, "_own_generator", lambda original: own_generator):
        yield


@fault({"DATA-001": "stdout line"})
def drop_last_ignored() -> Iterator[None]:
    """BatchSampler keeps the last, short batch even with drop_last."""
    import itertools

    from impl.utils.data import BatchSampler

    def make(original: Callable) -> Callable:
        def batches(self: Any) -> Iterator[list[int]]:
            indices = iter(self.sampler)
            while batch := list(itertools.islice(indices, self.batch_size)):
                yield batch

        return batches

    with patched(BatchSampler, "__iter__", make):
        yield


@fault({"DATA-001": "stdout line"})
def loader_draws_no_base_seed() -> Iterator[None]:
    """A DataLoader iterator draws no base seed from the stream (torch draws one per iterator)."""
    from impl.utils.data import dataloader

    def make(original: Callable) -> Callable:
        def init(self: Any, loader: Any) -> None:
            self._loader = loader
            self._indices = iter(loader._index_sampler)
            self._dataset_iter = iter(loader.dataset) if loader._iterable else None
            self._ended = False
            self._num_yielded = 0

        return init

    with patched(dataloader._LoaderIter, "__init__", make):
        yield


@fault({"DATA-002": "stdout line"})
def collate_dict_as_list_of_values() -> Iterator[None]:
    """default_collate of dict samples gives a list of the collated values, not a dict."""
    from impl.utils.data import dataloader

    def make(original: Callable) -> Callable:
        def collate(batch: list) -> Any:
            if isinstance(batch[0], dict):
                return [collate([d[key] for d in batch]) for key in batch[0]]
            return original(batch)

        return collate

    with patched(dataloader, "default_collate", make):
        yield


@fault({"DATA-002": "stdout line"})
def collate_floats_as_float32() -> Iterator[None]:
    """default_collate makes float samples a float32 tensor (torch: float64)."""
    from impl import dtypes
    from impl._creation import tensor
    from impl.utils.data import dataloader

    def make(original: Callable) -> Callable:
        def collate(batch: list) -> Any:
            if isinstance(batch[0], float):
                return tensor(batch, dtype=dtypes.float32)
            return original(batch)

        return collate

    with patched(dataloader, "default_collate", make):
        yield


@fault({"DATA-002": "stdout line"})
def random_split_remainder_to_the_last() -> Iterator[None]:
    """random_split by fractions gives the items the floors leave over to the last subset (torch:
    one each, from the first)."""
    import math

    from impl.utils.data import dataset

    def make(original: Callable) -> Callable:
        def random_split(data: Any, lengths: Any, generator: Any = dataset._random.default_generator) -> Any:
            if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
                counts = [int(math.floor(len(data) * f)) for f in lengths]
                counts[-1] += len(data) - sum(counts)
                lengths = counts
            return original(data, lengths, generator)

        return random_split

    import impl.utils.data as data_package

    with patched(data_package, "random_split", make):
        yield


@fault({"RNG-001": "stdout line"})
def bernoulli_of_float_p_draws_doubles() -> Iterator[None]:
    """bernoulli with a tensor of float32 probabilities draws double uniforms (torch: float ones)."""
    import numpy as np

    from impl import _random

    def make(original: Callable) -> Callable:
        def bernoulli(p: Any, dtype: Any, gen: Any = None) -> Any:
            return original(p.astype(np.float64), dtype, gen)

        return bernoulli

    with patched(_random, "bernoulli", make):
        yield


@fault({"RNG-001": "stdout line"})
def trunc_normal_clamps_instead_of_redrawing() -> Iterator[None]:
    """nn.init.trunc_normal_ clamps one normal draw into [a, b] instead of redrawing what falls outside."""
    import impl.nn.init as init

    def make(original: Callable) -> Callable:
        def trunc_normal_(tensor: Any, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                          generator: Any = None) -> Any:
            init.normal_(tensor, mean, std, generator)
            with init.grad_mode.no_grad():
                return tensor.clamp_(a, b)

        return trunc_normal_

    with patched(init, "trunc_normal_", make):
        yield


@fault({"RNG-001": "stdout line"})
def sparse_zeros_floor_of_sparsity() -> Iterator[None]:
    """nn.init.sparse_ zeroes floor(sparsity * rows) entries of each column (torch: the ceiling)."""
    import impl.nn.init as init

    def make(original: Callable) -> Callable:
        def sparse_(tensor: Any, sparsity: float, std: float = 0.01, generator: Any = None) -> Any:
            rows = tensor.shape[0]
            return original(tensor, int(sparsity * rows) / rows - 1e-9, std, generator)

        return sparse_

    with patched(init, "sparse_", make):
        yield


@fault({"RNG-001": "stdout line"})
def orthogonal_without_the_sign_correction() -> Iterator[None]:
    """nn.init.orthogonal_ keeps Q's columns as QR gives them (torch: signs of R's diagonal)."""
    import impl.nn.init as init

    def make(original: Callable) -> Callable:
        def qr(a: Any) -> Any:
            q, r = original(a)
            return q, r.abs()

        return qr

    with patched(init.linalg, "qr", make):
        yield


@fault({"RNG-001": "stdout line"})
def fork_rng_restores_nothing() -> Iterator[None]:
    """torch.random.fork_rng leaves the global stream where the block left it."""
    import contextlib

    import impl.random as random_module

    def make(original: Callable) -> Callable:
        @contextlib.contextmanager
        def fork_rng(*args: Any, **kwargs: Any) -> Iterator[None]:
            yield

        return fork_rng

    with patched(random_module, "fork_rng", make):
        yield


@fault({"RNG-001": "stdout line"})
def geometric_counts_failures() -> Iterator[None]:
    """geometric_ counts the failures before the first success, not the trials up to it (torch's
    support starts at 1): every draw one less than torch's."""
    from impl import _random

    with patched(_random, "geometric", lambda original: lambda *a, **k: original(*a, **k) - 1):
        yield
