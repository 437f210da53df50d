# Seed 003 (003_e3f8098703fe135f.txt, 4.5): an nn.Module with two nn.Parameter (registered
# automatically, requires_grad=True) whose forward is x@w + b.
# Changed: the post then exports the graph to TensorBoard (SummaryWriter, notebook magics), which
# needs the tensorboard package and writes files; instead the net is printed, its parameters
# listed and a forward/backward run on the post's torch.rand(10,2) input (seeded).
import torch

torch.manual_seed(0)  # added
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.w = nn.Parameter(torch.randn(2,1))
        self.b = nn.Parameter(torch.zeros(1,1))

    def forward(self, x):
        y = x@self.w + self.b
        return y

net = Net()

# added in place of writer.add_graph(net,input_to_model = torch.rand(10,2))
print(net)
for name, p in net.named_parameters():
    print(name, p.shape, p.requires_grad, p.is_leaf)
out = net(torch.rand(10,2))
print(out.grad_fn)
out.sum().backward()
print(net.w.grad, net.b.grad)
