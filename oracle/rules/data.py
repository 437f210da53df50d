"""Rules of the family "data loading and random generators" (conformance/test_data.py): seeded
programs draw torch's random numbers, and torch.utils.data loads and collates as torch's does."""

from oracle.rules import Rule

FAMILY = "data loading and random generators"
_DOCS = "https://pytorch.org/docs/stable"

RULES = [
    Rule(
        "RNG-001",
        FAMILY,
        "After the same seed, rand, randn, randint, randperm, multinomial, normal (tensor or float mean "
        "and std), bernoulli (a tensor or a float p, bernoulli_), poisson and the in-place uniform_, "
        "normal_, random_, exponential_, log_normal_ (every floating dtype) and geometric_ (floating "
        "and integer dtypes) draw torch's numbers, from the global stream or a "
        "torch.Generator, and so do nn.init's trunc_normal_ (redrawn normals, or uniforms accepted "
        "by the density), sparse_ and orthogonal_; a generator's get_state/set_state replays them, "
        "and torch.random.fork_rng restores the global stream on exit.",
        f"{_DOCS}/generated/torch.Generator.html",
    ),
    Rule(
        "DATA-001",
        FAMILY,
        "A seeded DataLoader yields torch's batches: shuffle draws its order as torch's RandomSampler "
        "does (a seed from the global stream, or the loader's generator), batch_size, drop_last, "
        "sampler and batch_sampler cut the same batches, and the global stream after the loop is "
        "torch's.",
        f"{_DOCS}/data.html#torch.utils.data.DataLoader",
    ),
    Rule(
        "DATA-002",
        FAMILY,
        "default_collate combines tensors, numbers, strings, tuples, lists and dicts of samples as "
        "torch's does, and random_split (lengths or fractions, with a generator) picks torch's subsets.",
        f"{_DOCS}/data.html#torch.utils.data.default_collate",
    ),
]
