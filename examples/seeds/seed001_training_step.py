# Seed 001 (001_4cfcf2e30ddaa7d6.txt): the training-step life cycle: parameters require grad by
# default, optimizer.zero_grad() (equivalent to model.zero_grad()) before backward because
# gradients accumulate, optimizer.step(); then freezing a sub-module with requires_grad = False.
# Changed: the post's fragments use a model, data, loss and options defined elsewhere
# (net.dehaze, weights_init, opt.*, a checkpoint file). Here netD is a small nn.Sequential on fixed
# random data (torch.manual_seed), criterion is nn.MSELoss, the Adam settings are the post's with
# lr=0.0002 and beta1=0.5 for opt.lrG/opt.beta1, no checkpoint is loaded, and prints are added so
# that each step's effect is visible.
import torch
import torch.nn as nn
from torch import optim

torch.manual_seed(0)
netD = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
criterion = nn.MSELoss()
optimizer = optim.Adam(netD.parameters(), lr = 0.0002, betas = (0.5, 0.999), weight_decay=0.00005)
inputs = torch.randn(8, 3)
labels = torch.randn(8, 1)

print([p.requires_grad for p in netD.parameters()])
print(inputs.requires_grad, netD(inputs).requires_grad, nn.ReLU()(inputs).requires_grad)

for step in range(3):
    ### 梯度可导
    for p in netD.parameters():
        p.requires_grad = True
    ### forward + backward
    outputs = netD(inputs)
    loss = criterion(outputs, labels)
    ### optimize
    # zero the parameter gradients
    optimizer.zero_grad()     #等效netD.zero_grad()
    loss.backward()
    optimizer.step()   # update parameters
    print(step, loss.item())
    print(netD[0].weight.grad)

# 梯度是被积累的而不是被替换掉: two backward passes without zero_grad add up
netD.zero_grad()
print(netD[2].bias.grad)
criterion(netD(inputs), labels).backward()
first = netD[2].bias.grad.clone()
criterion(netD(inputs), labels).backward()
print(first, netD[2].bias.grad)

# 固定特定网络
sub_module = netD[0]
for p in sub_module.parameters():
    p.requires_grad = False
optimizer.zero_grad()
criterion(netD(inputs), labels).backward()
print(sub_module.weight.grad, netD[2].weight.grad)
