# Seed 002 (002_b1ee09503b87e959.txt): reshape() of a leaf makes a non-leaf; retain_grad() (called
# before backward) makes such non-leaves keep their .grad.
import torch

x=torch.arange(10,dtype=torch.float32,requires_grad=True).reshape(10,1)
w=torch.arange(10,dtype=torch.float32,requires_grad=True).reshape(1,10)
y=w@x
x.retain_grad()
w.retain_grad()
y.backward()
print(x.is_leaf)
print(w.is_leaf)
print(x.grad)
print(w.grad)
