"""The tensor-level code of the seed posts (/work/shared/seeds), as runnable programs.

Each program uses the name ``torch`` and is run once with real torch and once with ``impl``;
the printed output must be identical (object addresses aside).
"""

SEED_000_RETAIN_GRAD = """
def forwrad(x, y, w1, w2):
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
x = torch.tensor([[1.0]])
y = torch.tensor([[1.0], [0.0]])
w1 = torch.tensor([[1.0], [2.0]], requires_grad=True)
w2 = torch.tensor([[3.0, 4.0], [5.0, 6.0]], requires_grad=True)
loss, z_1, y_1, z_2, y_2 = forwrad(x, y, w1, w2)
loss.backward()
for t in (z_1, y_1, z_2, y_2, loss, w1, w2):
    print(t.grad)
"""

SEED_000_HOOKS = """
grads = {}
def save_grad(name):
    def hook(grad):
        grads[name] = grad
    return hook
def forwrad(x, y, w1, w2):
    z_1 = torch.mm(w1, x)
    y_1 = torch.sigmoid(z_1)
    z_2 = torch.mm(w2, y_1)
    y_2 = torch.sigmoid(z_2)
    loss = 1/2*(((y_2 - y)**2).sum())
    return loss, z_1, y_1, z_2, y_2
x = torch.tensor([[1.0]])
y = torch.tensor([[1.0], [0.0]])
w1 = torch.tensor([[1.0], [2.0]], requires_grad=True)
w2 = torch.tensor([[3.0, 4.0], [5.0, 6.0]], requires_grad=True)
loss, z_1, y_1, z_2, y_2 = forwrad(x, y, w1, w2)
z_1.register_hook(save_grad('z_1'))
y_1.register_hook(save_grad('y_1'))
z_2.register_hook(save_grad('z_2'))
y_2.register_hook(save_grad('y_2'))
loss.register_hook(save_grad('loss'))
loss.backward()
print(grads['z_1'])
print(grads['y_1'])
print(grads['z_2'])
print(grads['y_2'])
print(grads['loss'])
"""

SEED_001_VARIABLE = """
from torch import autograd
input=torch.FloatTensor([1,2,3])
input_v=autograd.Variable(input,requires_grad=False)
loss=torch.mean(input_v)
print (loss.requires_grad)
try:
    loss.backward()
except RuntimeError as e:
    print("RuntimeError:", e)
print( input_v)
print (input_v.grad)
"""

SEED_001_SIMPLE = """
from torch.autograd import Variable as v
t = torch
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
print(a.grad.data)
"""

SEED_001_JACOBIAN = """
from torch.autograd import Variable
t = torch
v = Variable
m = Variable(torch.FloatTensor([[2, 3]]), requires_grad=True)
n = Variable(torch.zeros(1, 2))
n[0, 0] = m[0, 0] ** 2
n[0, 1] = m[0, 1] ** 3
n.backward(torch.FloatTensor([[1, 1]]),retain_graph=True)
print(m.grad)
print(n)
j = t.zeros(2 ,2)
k = v(t.zeros(1, 2))
m.grad.data.zero_()
k[0, 0] = m[0, 0] ** 2 + 3 * m[0 ,1]
k[0, 1] = m[0, 1] ** 2 + 2 * m[0, 0]
k.backward(t.FloatTensor([[1, 0]]), retain_graph=True)
j[:, 0] = m.grad.data
m.grad.data.zero_()
k.backward(t.FloatTensor([[0, 1]]))
j[:, 1] = m.grad.data
print('jacobian matrix is')
print(j)
try:
    k.backward(t.FloatTensor([[0, 1]]))
except RuntimeError as e:
    print("RuntimeError:", e)
"""

SEED_002_LEAVES = """
x = torch.tensor(2.0, requires_grad=True)
y = x ** 2
z = y + 1
z.backward()
print(x.grad)
print(y.grad)
print(x.is_leaf)
print(y.is_leaf)
print(x.grad_fn)
print(type(y.grad_fn).__name__)
a = torch.Tensor([1,2]).requires_grad_()
b = torch.Tensor([3,4]).requires_grad_()
d = torch.Tensor([2]).requires_grad_()
c = a + b
e = c * d
o = e.sum()
o.backward()
print(a.grad)
print(b.grad)
print(c.grad)
print(d.grad)
print(e.grad)
print(o.grad)
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
"""

SEED_003_DTYPES = """
import numpy as np
i = torch.tensor(1)
print(i,i.dtype)
x = torch.tensor(2.0)
print(x,x.dtype)
b = torch.tensor(True)
print(b,b.dtype)
i = torch.tensor(1,dtype = torch.int32);print(i,i.dtype)
x = torch.tensor(2.0,dtype = torch.double);print(x,x.dtype)
x = torch.Tensor(np.array(2.0));print(x,x.dtype)
b = torch.BoolTensor(np.array([1,0,2,0])); print(b,b.dtype)
i = torch.tensor(1); print(i,i.dtype)
x = i.float(); print(x,x.dtype)
y = i.type(torch.float); print(y,y.dtype)
z = i.type_as(x);print(z,z.dtype)
scalar = torch.tensor(True)
print(scalar)
print(scalar.dim())
vector = torch.tensor([1.0,2.0,3.0,4.0])
print(vector)
print(vector.dim())
tensor3 = torch.tensor([[[1.0,2.0],[3.0,4.0]],[[5.0,6.0],[7.0,8.0]]])
print(tensor3)
print(tensor3.dim())
tensor4 = torch.tensor([[[[1.0,1.0],[2.0,2.0]],[[3.0,3.0],[4.0,4.0]]],
[[[5.0,5.0],[6.0,6.0]],[[7.0,7.0],[8.0,8.0]]]])
print(tensor4)
print(tensor4.dim())
print(vector.size())
print(vector.shape)
"""

SEED_003_VIEWS = """
vector = torch.arange(0,12)
print(vector)
print(vector.shape)
matrix34 = vector.view(3,4)
print(matrix34)
print(matrix34.shape)
matrix43 = vector.view(4,-1)
print(matrix43)
print(matrix43.shape)
matrix26 = torch.arange(0,12).view(2,6)
print(matrix26)
print(matrix26.shape)
matrix62 = matrix26.t()
print(matrix62.is_contiguous())
try:
    matrix34 = matrix62.view(3,4)
except RuntimeError as e:
    print("RuntimeError:", e)
matrix34 = matrix62.reshape(3,4)
print(matrix34)
"""

SEED_003_NUMPY = """
import numpy as np
arr = np.zeros(3)
tensor = torch.from_numpy(arr)
print("before add 1:")
print(arr)
print(tensor)
print("\\nafter add 1:")
np.add(arr,1, out = arr)
print(arr)
print(tensor)
tensor = torch.zeros(3)
arr = tensor.numpy()
print("before add 1:")
print(tensor)
print(arr)
print("\\nafter add 1:")
tensor.add_(1)
print(tensor)
print(arr)
tensor = torch.zeros(3)
arr = tensor.clone().numpy()
print("before add 1:")
print(tensor)
print(arr)
print("\\nafter add 1:")
tensor.add_(1)
print(tensor)
print(arr)
scalar = torch.tensor(1.0)
s = scalar.item()
print(s)
print(type(s))
t = torch.rand(2,2).tolist()
print(type(t), len(t), type(t[0][0]))
"""

SEED_003_BACKWARD = """
x = torch.tensor(0.0,requires_grad = True)
a = torch.tensor(1.0)
b = torch.tensor(-2.0)
c = torch.tensor(1.0)
y = a*torch.pow(x,2) + b*x + c
y.backward()
dy_dx = x.grad
print(dy_dx)
x = torch.tensor([[0.0,0.0],[1.0,2.0]],requires_grad = True)
y = a*torch.pow(x,2) + b*x + c
gradient = torch.tensor([[1.0,1.0],[1.0,1.0]])
print("x:\\n",x)
print("y:\\n",y)
y.backward(gradient = gradient)
x_grad = x.grad
print("x_grad:\\n",x_grad)
x = torch.tensor([[0.0,0.0],[1.0,2.0]],requires_grad = True)
y = a*torch.pow(x,2) + b*x + c
z = torch.sum(y*gradient)
print("x:",x)
print("y:",y)
z.backward()
x_grad = x.grad
print("x_grad:\\n",x_grad)
"""

SEED_003_AUTOGRAD_GRAD = """
x = torch.tensor(0.0,requires_grad = True)
a = torch.tensor(1.0)
b = torch.tensor(-2.0)
c = torch.tensor(1.0)
y = a*torch.pow(x,2) + b*x + c
dy_dx = torch.autograd.grad(y,x,create_graph=True)[0]
print(dy_dx.data)
dy2_dx2 = torch.autograd.grad(dy_dx,x)[0]
print(dy2_dx2.data)
x1 = torch.tensor(1.0,requires_grad = True)
x2 = torch.tensor(2.0,requires_grad = True)
y1 = x1*x2
y2 = x1+x2
(dy1_dx1,dy1_dx2) = torch.autograd.grad(outputs=y1,inputs = [x1,x2],retain_graph = True)
print(dy1_dx1,dy1_dx2)
(dy12_dx1,dy12_dx2) = torch.autograd.grad(outputs=[y1,y2],inputs = [x1,x2])
print(dy12_dx1,dy12_dx2)
"""

SEED_003_MANUAL_SGD = """
x = torch.tensor(0.0,requires_grad = True)
a = torch.tensor(1.0)
b = torch.tensor(-2.0)
c = torch.tensor(1.0)
def f(x):
    result = a*torch.pow(x,2) + b*x + c
    return(result)
for i in range(500):
    x.grad = None
    y = f(x)
    y.backward()
    with torch.no_grad():
        x -= 0.01 * x.grad
print("y=",f(x).data,";","x=",x.data)
"""

SEED_003_GRAPH_FREED = """
w = torch.tensor([[3.0,1.0]],requires_grad=True)
b = torch.tensor([[3.0]],requires_grad=True)
X = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.0, 3.0]])
Y = torch.tensor([[1.0], [2.0], [3.0]])
Y_hat = X@w.t() + b
loss = torch.mean(torch.pow(Y_hat-Y,2))
print(loss.data)
print(Y_hat.data)
print(Y_hat.grad_fn.name(), [(type(n).__name__ if n else None, i) for n, i in Y_hat.grad_fn.next_functions])
loss.backward()
try:
    loss.backward()
except RuntimeError as e:
    print("RuntimeError:", e)
"""

SEED_003_FUNCTION = """
class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)
    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input
w = torch.tensor([[3.0,1.0]],requires_grad=True)
b = torch.tensor([[3.0]],requires_grad=True)
X = torch.tensor([[-1.0,-1.0],[1.0,1.0]])
Y = torch.tensor([[2.0,3.0]])
relu = MyReLU.apply
Y_hat = relu(X@w.t() + b)
loss = torch.mean(torch.pow(Y_hat-Y,2))
loss.backward()
print(w.grad)
print(b.grad)
print(type(Y_hat.grad_fn).__name__)
"""

SEED_003_LEAF_AND_HOOK_ORDER = """
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
x = torch.tensor(3.0,requires_grad=True)
y1 = x + 1
y2 = 2*x
loss = (y1-y2)**2
y1.register_hook(lambda grad: print('y1 grad: ', grad))
y2.register_hook(lambda grad: print('y2 grad: ', grad))
loss.retain_grad()
loss.backward()
print("loss.grad:", loss.grad)
print("x.grad:", x.grad)
"""

SEED_004_TENSOR_HOOKS = """
x = torch.Tensor([0,1,2,3]).requires_grad_()
y = torch.Tensor([4,5,6,7]).requires_grad_()
w = torch.Tensor([1,2,3,4]).requires_grad_()
z = x+y;
o = w.matmul(z)
o.backward()
print(x.grad,y.grad,z.grad,w.grad,o.grad)
x = torch.Tensor([0,1,2,3]).requires_grad_()
y = torch.Tensor([4,5,6,7]).requires_grad_()
w = torch.Tensor([1,2,3,4]).requires_grad_()
z = x+y;
def hook_fn(grad):
    print(grad)
    return None
z.register_hook(hook_fn)
o = w.matmul(z)
o.backward()
print(x.grad,y.grad,w.grad,z.grad,o.grad)
z = x + y
z.register_hook(lambda g: g * 2)
o = w.matmul(z)
o.backward()
print(x.grad, y.grad)
"""

PROGRAMS = {k: v for k, v in globals().items() if k.startswith("SEED_")}
