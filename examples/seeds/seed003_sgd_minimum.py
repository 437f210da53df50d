# Seed 003 (003_e3f8098703fe135f.txt, 3.3): minimising f(x) = x**2 - 2x + 1 with autograd and
# torch.optim.SGD (zero_grad, backward, step for 500 iterations) reaches x = 1.
import numpy as np
import torch

# f(x) = a*x**2 + b*x + c的最小值

x = torch.tensor(0.0,requires_grad = True) # x需要被求导
a = torch.tensor(1.0)
b = torch.tensor(-2.0)
c = torch.tensor(1.0)

optimizer = torch.optim.SGD(params=[x],lr = 0.01)


def f(x):
    result = a*torch.pow(x,2) + b*x + c
    return(result)

for i in range(500):
    optimizer.zero_grad()
    y = f(x)
    y.backward()
    optimizer.step()


print("y=",f(x).data,";","x=",x.data)
