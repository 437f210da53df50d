# Seed 002 (002_b1ee09503b87e959.txt): after backward, the leaves a, b, d keep their gradients;
# the non-leaves c, e, o have .grad None (each read warns).
import torch
a = torch.Tensor([1,2]).requires_grad_()
b = torch.Tensor([3,4]).requires_grad_()
d = torch.Tensor([2]).requires_grad_()
c = a + b
e = c * d
o = e.sum()

o.backward()
print(a.grad)
print(b.grad)
print(c.grad)
print(d.grad)
print(e.grad)
print(o.grad)
