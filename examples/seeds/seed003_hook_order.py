# Seed 003 (003_e3f8098703fe135f.txt, 4.4): register_hook shows non-leaf gradients as backward
# reaches them (y2's hook fires before y1's), retain_grad keeps loss.grad.
import torch

#正向传播
x = torch.tensor(3.0,requires_grad=True)
y1 = x + 1
y2 = 2*x
loss = (y1-y2)**2

#非叶子节点梯度显示控制
y1.register_hook(lambda grad: print('y1 grad: ', grad))
y2.register_hook(lambda grad: print('y2 grad: ', grad))
loss.retain_grad()

#反向传播
loss.backward()
print("loss.grad:", loss.grad)
print("x.grad:", x.grad)
