# Seed 003 (003_e3f8098703fe135f.txt, 4.1): the forward pass runs immediately as each line builds
# the graph; backward() then frees the graph.
# Changed: torch.manual_seed(0) added so torch.randn is deterministic (the printed values differ
# from the post's unseeded run). The second backward, commented out in the post, is run in
# seed003_graph_freed.py.
import torch

torch.manual_seed(0)  # added
w = torch.tensor([[3.0,1.0]],requires_grad=True)
b = torch.tensor([[3.0]],requires_grad=True)
X = torch.randn(10,2)
Y = torch.randn(10,1)
Y_hat = X@w.t() + b # Y_hat定义后其正向传播被立即执行,与其后面的loss创建语句无关
loss = torch.mean(torch.pow(Y_hat-Y,2))

print(loss.data)
print(Y_hat.data)

w = torch.tensor([[3.0,1.0]],requires_grad=True)
b = torch.tensor([[3.0]],requires_grad=True)
X = torch.randn(10,2)
Y = torch.randn(10,1)
Y_hat = X@w.t() + b # Y_hat定义后其正向传播被立即执行,与其后面的loss创建语句无关
loss = torch.mean(torch.pow(Y_hat-Y,2))

#计算图在反向传播后立即销毁,如果需要保留计算图, 需要设置retain_graph = True
loss.backward() #loss.backward(retain_graph = True)

#loss.backward() #如果再次执行反向传播将报错
print(w.grad, b.grad)  # added: the gradients of this backward
