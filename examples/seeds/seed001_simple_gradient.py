# Seed 001 (001_4cfcf2e30ddaa7d6.txt): a simple gradient with the legacy Variable wrapper;
# backward() fills .grad of the input.
# Changed: the post uses `t` and `v` without showing their imports; they are torch and
# torch.autograd.Variable (the usual aliases of that era), imported here.
import torch as t
from torch.autograd import Variable as v

# simple gradient
a = v(t.FloatTensor([2, 3]), requires_grad=True)
b = a + 3
c = b * b * 3
out = c.mean()
out.backward()
print('*'*10)
print('=====simple gradient======')
print('input')
print(a.data)
print('compute result is')
print(out.item())
print('input gradients are')
print(a.grad.data)#输出梯度
