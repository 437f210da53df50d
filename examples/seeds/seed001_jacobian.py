# Seed 001 (001_4cfcf2e30ddaa7d6.txt): backward of a non-scalar with a gradient argument and
# retain_graph=True, then a Jacobian built from two backward calls, zeroing .grad in between.
# Changed: `t`/`v`/`Variable` imports added (the post does not show them); in the Jacobian,
# `retain_variables=True` (removed in PyTorch 0.4, the post itself says it equals retain_graph)
# is written `retain_graph=True`, since current torch rejects the old keyword.
import torch
import torch as t
from torch.autograd import Variable
from torch.autograd import Variable as v

m = Variable(torch.FloatTensor([[2, 3]]), requires_grad=True)
n = Variable(torch.zeros(1, 2))
n[0, 0] = m[0, 0] ** 2
n[0, 1] = m[0, 1] ** 3

n.backward(torch.FloatTensor([[1, 1]]),retain_graph=True)########既有两次求导,又需要设置[1,1]的系数,具体体现在下面二维可以看出

print(m.grad)
print(m.grad)

# jacobian
j = t.zeros(2 ,2)
k = v(t.zeros(1, 2))
m.grad.data.zero_()
k[0, 0] = m[0, 0] ** 2 + 3 * m[0 ,1]
k[0, 1] = m[0, 1] ** 2 + 2 * m[0, 0]
k.backward(t.FloatTensor([[1, 0]]), retain_graph=True)###只获取对x1的偏导  (post: retain_variables=True)
j[:, 0] = m.grad.data
m.grad.data.zero_()
k.backward(t.FloatTensor([[0, 1]]))###只获取对x2的偏导
j[:, 1] = m.grad.data
print('jacobian matrix is')
print(j)
