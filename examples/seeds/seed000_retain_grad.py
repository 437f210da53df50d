# Seed 000 (000_8f4aee35a4a2fd0a.txt): gradients of intermediate (non-leaf) tensors kept with
# retain_grad(), on a two-layer sigmoid network.
# Changed: the post shows the resulting gradients as screenshots; the prints at the end are added
# (they must equal the hook version, seed000_register_hook.py).
import torch


def forwrad(x, y, w1, w2):
    # 其中 x,y 为输入数据,w为该函数所需要的参数
    z_1 = torch.mm(w1, x)
    z_1.retain_grad()
    y_1 = torch.sigmoid(z_1)
    y_1.retain_grad()
    z_2 = torch.mm(w2, y_1)
    z_2.retain_grad()
    y_2 = torch.sigmoid(z_2)
    y_2.retain_grad()
    loss = 1/2*(((y_2 - y)**2).sum())
    loss.retain_grad()
    return loss, z_1, y_1, z_2, y_2


# 测试代码
x = torch.tensor([[1.0]])
y = torch.tensor([[1.0], [0.0]])
w1 = torch.tensor([[1.0], [2.0]], requires_grad=True)
w2 = torch.tensor([[3.0, 4.0], [5.0, 6.0]], requires_grad=True)
# w2 = torch.tensor([[3.0, 1.0], [1.0, 6.0]], requires_grad=True)
# 正向
loss, z_1, y_1, z_2, y_2 = forwrad(x, y, w1, w2)
# 反向
loss.backward() # 反向传播,计算梯度

# added: print what the post's screenshots show
print(z_1.grad)
print(y_1.grad)
print(z_2.grad)
print(y_2.grad)
print(loss.grad)
print(w1.grad)
print(w2.grad)
