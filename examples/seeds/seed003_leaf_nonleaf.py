# Seed 003 (003_e3f8098703fe135f.txt, 4.3-4.4): backward through loss = (y1 - y2)**2 accumulates
# into x.grad; only the leaf x keeps a gradient (loss, y1, y2 have .grad None, each read warns).
import torch

x = torch.tensor(3.0,requires_grad=True)
y1 = x + 1
y2 = 2*x
loss = (y1-y2)**2

loss.backward()
print("loss.grad:", loss.grad)
print("y1.grad:", y1.grad)
print("y2.grad:", y2.grad)
print(x.grad)

print(x.is_leaf)
print(y1.is_leaf)
print(y2.is_leaf)
print(loss.is_leaf)
