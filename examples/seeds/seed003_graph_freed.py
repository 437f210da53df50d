# Seed 003 (003_e3f8098703fe135f.txt, 4.1): "如果再次执行反向传播将报错": the graph is freed by
# backward(), so a second backward raises torch's RuntimeError, unless the first one passed
# retain_graph=True.
# Changed: the post's snippet with the deterministic data of torch.manual_seed(0); the retained
# variant is shown first, then the commented-out second backward is run: the script ends with
# the error the post's comment announces.
import torch

torch.manual_seed(0)  # added
w = torch.tensor([[3.0,1.0]],requires_grad=True)
b = torch.tensor([[3.0]],requires_grad=True)
X = torch.randn(10,2)
Y = torch.randn(10,1)
Y_hat = X@w.t() + b # Y_hat定义后其正向传播被立即执行,与其后面的loss创建语句无关
loss = torch.mean(torch.pow(Y_hat-Y,2))

#计算图在反向传播后立即销毁,如果需要保留计算图, 需要设置retain_graph = True
loss.backward(retain_graph = True)  # added: the retained variant the comment describes
loss.backward()
print(w.grad, b.grad)  # added: two backward passes accumulate

loss = torch.mean(torch.pow(X@w.t() + b-Y,2))
loss.backward()
loss.backward() #如果再次执行反向传播将报错
