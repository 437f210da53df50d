# Seed 004 (004_5ac0607c39fcf166.txt): "如果 hook_fn 的返回值是 Tensor 类型,则该 Tensor 将取代 z
# 原有的梯度,向前传播": a hook returning a tensor replaces the gradient for what follows.
# Changed: derived from the post's prose (its code only shows a hook returning None): the post's
# z = x+y example with three hooks on z, run in registration order: one prints the gradient, one
# returns a replacement (the gradient doubled), one prints what it then receives; x.grad and y.grad
# receive the replacement.
import torch
x = torch.Tensor([0,1,2,3]).requires_grad_()
y = torch.Tensor([4,5,6,7]).requires_grad_()
w = torch.Tensor([1,2,3,4]).requires_grad_()
z = x+y;
def hook_fn(grad):
    print(grad)
    return None
def double_fn(grad):
    return grad * 2
def replaced_fn(grad):
    print('replaced:', grad)
z.register_hook(hook_fn)
z.register_hook(double_fn)
z.register_hook(replaced_fn)
o = w.matmul(z) # o = w(x+y) 中间变量z
o.backward()
print(x.grad,y.grad,w.grad)
