# Seed 000 (000_8f4aee35a4a2fd0a.txt): gradients of intermediate (non-leaf) tensors captured with
# tensor.register_hook instead of retain_grad(); the post prints them (expected output at the end).
import torch

# 我们可以定义一个hook来保存中间的变量
grads = {} # 存储节点名称与节点的grad
def save_grad(name):
    def hook(grad):
        grads[name] = grad
    return hook


def forwrad(x, y, w1, w2):
    # 其中 x,y 为输入数据,w为该函数所需要的参数
    z_1 = torch.mm(w1, x)
    y_1 = torch.sigmoid(z_1)
    z_2 = torch.mm(w2, y_1)
    y_2 = torch.sigmoid(z_2)
    loss = 1/2*(((y_2 - y)**2).sum())
    return loss, z_1, y_1, z_2, y_2


# 测试代码
x = torch.tensor([[1.0]])
y = torch.tensor([[1.0], [0.0]])
w1 = torch.tensor([[1.0], [2.0]], requires_grad=True)
w2 = torch.tensor([[3.0, 4.0], [5.0, 6.0]], requires_grad=True)
# 正向传播
loss, z_1, y_1, z_2, y_2 = forwrad(x, y, w1, w2)
# hook中间节点
z_1.register_hook(save_grad('z_1'))
y_1.register_hook(save_grad('y_1'))
z_2.register_hook(save_grad('z_2'))
y_2.register_hook(save_grad('y_2'))
loss.register_hook(save_grad('loss'))
# 反向传播
loss.backward()

print(grads['z_1'])
print(grads['y_1'])
print(grads['z_2'])
print(grads['y_2'])
print(grads['loss'])
"""
tensor([[1.2243e-04],
        [7.8005e-05]])
tensor([[0.0006],
        [0.0007]])
tensor([[-1.0728e-05],
        [ 1.3098e-04]])
tensor([[-0.0033],
        [ 0.9999]])
tensor(1.)
"""
