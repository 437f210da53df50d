# Seed 004 (004_5ac0607c39fcf166.txt): the legacy module.register_backward_hook(hook_fn) on each
# child: hook_fn(module, grad_input, grad_output) sees, for Linear, the gradients of addmm's inputs
# (bias, input, weight.t()); then the same hook on the whole model only sees its last operation.
# Changed: the post says "上面的代码forward全部替换为backward" (replace forward by backward in the
# forward-hook example); that replacement is written out here. Its last snippet
# (class Mymodel(nn.Module): ......) elides the model, the post's Model is used for it.
import torch
from torch import nn
class Model(nn.Module):
    def __init__(self):
        super(Model,self).__init__()
        self.fc1 = nn.Linear(3,4) # WT * X + bias
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(4,1)
        self.init()
    def init(self):
        with torch.no_grad():
            # WT * X + bias,所以W为4*3的矩阵,bias为1*4
            self.fc1.weight = torch.nn.Parameter(
                torch.Tensor([[1., 2., 3.],
                              [-4., -5., -6.],
                              [7., 8., 9.],
                              [-10., -11., -12.]]))
            self.fc1.bias = torch.nn.Parameter(torch.Tensor([1.0, 2.0, 3.0, 4.0]))
            self.fc2.weight = torch.nn.Parameter(torch.Tensor([[1.0, 2.0, 3.0, 4.0]]))
            self.fc2.bias = torch.nn.Parameter(torch.Tensor([1.0]))
    def forward(self,x):
        o = self.fc1(x)
        o = self.relu1(o)
        o = self.fc2(o)
        return o
def hook_fn_backward(module,grad_input,grad_output):
    print(module)
    print(grad_input)
    print(grad_output)
model = Model()
modules = model.named_children()
for name,module in modules:
    module.register_backward_hook(hook_fn_backward)
x = torch.Tensor([[1.0,1.0,1.0]]).requires_grad_()
o = model(x)
o.backward()
'''
Linear(in_features=4, out_features=1, bias=True)
(tensor([1.]), tensor([[1., 2., 3., 4.]]), tensor([[ 7.],
[ 0.],
[27.],
[ 0.]]))
(tensor([[1.]]),)
ReLU()
(tensor([[1., 0., 3., 0.]]),)
(tensor([[1., 2., 3., 4.]]),)
Linear(in_features=3, out_features=4, bias=True)
(tensor([1., 0., 3., 0.]), tensor([[22., 26., 30.]]), tensor([[1., 0., 3., 0.],
[1., 0., 3., 0.],
[1., 0., 3., 0.]]))
(tensor([[1., 0., 3., 0.]]),)
'''

# register_backward_hook 只能操作简单模块,而不能操作包含多个子模块的复杂模块: on the whole model
# the hook only sees the gradients of its last simple operation (fc2's addmm).
model = Model()
model.register_backward_hook(hook_fn_backward)
o = model(x)
o.backward()
