# Seed 002 (002_b1ee09503b87e959.txt): only leaves keep .grad, only non-leaves have a grad_fn.
# Reading .grad of the non-leaf y returns None and warns (torch's UserWarning).
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 2
z = y + 1
z.backward()
print(x.grad)
print(y.grad)
print(x.is_leaf)
print(y.is_leaf)
print(x.grad_fn)
print(y.grad_fn)
