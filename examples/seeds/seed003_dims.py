# Seed 003 (003_e3f8098703fe135f.txt, 2.2): tensor dimensions: a scalar is 0-d, a vector 1-d,
# nested lists give 3-d and 4-d tensors ("有几层中括号,就是多少维的张量").
import torch

scalar = torch.tensor(True)
print(scalar)
print(scalar.dim()) # 标量,0维张量

vector = torch.tensor([1.0,2.0,3.0,4.0]) #向量,1维张量
print(vector)
print(vector.dim())

tensor3 = torch.tensor([[[1.0,2.0],[3.0,4.0]],[[5.0,6.0],[7.0,8.0]]])  # 3维张量
print(tensor3)
print(tensor3.dim())

tensor4 = torch.tensor([[[[1.0,1.0],[2.0,2.0]],[[3.0,3.0],[4.0,4.0]]],
                        [[[5.0,5.0],[6.0,6.0]],[[7.0,7.0],[8.0,8.0]]]]) # 4维张量
print(tensor4)
print(tensor4.dim())
