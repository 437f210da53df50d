# Seed 002 (002_b1ee09503b87e959.txt): which tensors are leaves. The post shows this as a figure
# (the Tensor.is_leaf example of the torch docs) and explains "b是被cast操作创建的(从cpu cast一个
# tensor到gpu)": the .cuda() cast of a tensor that requires grad is an op, so its result is no leaf.
# Changed: reconstructed from that figure as code, with torch.manual_seed for determinism; the
# .cuda() lines only run when a GPU is available (on CPU their lines are skipped).
import torch

torch.manual_seed(0)
a = torch.rand(10, requires_grad=True)
print(a.is_leaf)
if torch.cuda.is_available():
    b = torch.rand(10, requires_grad=True).cuda()
    print(b.is_leaf)  # False: b was created by the operation that cast a cpu Tensor into a cuda Tensor
c = torch.rand(10, requires_grad=True) + 2
print(c.is_leaf)
if torch.cuda.is_available():
    d = torch.rand(10).cuda()
    print(d.is_leaf)
    e = torch.rand(10).cuda().requires_grad_()
    print(e.is_leaf)
    f = torch.rand(10, requires_grad=True, device="cuda")
    print(f.is_leaf)
# a tensor that does not require grad is a leaf even when computed from one (the post's case ①)
g = torch.rand(10) + 1
print(g.is_leaf, g.requires_grad, g.grad_fn)
# detach() makes a leaf out of a non-leaf
h = c.detach()
print(h.is_leaf, h.requires_grad, h.grad_fn)
