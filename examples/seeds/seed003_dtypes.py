# Seed 003 (003_e3f8098703fe135f.txt, 2.1): tensor dtypes: inference from Python values, explicit
# dtype, typed constructors (IntTensor, Tensor, BoolTensor) and conversions (float, type, type_as).
# Note: torch.IntTensor(1) allocates one uninitialised element; its printed value is whatever the
# memory holds (the post shows 1), so that line prints only its dtype and shape here.
import numpy as np
import torch

# 自动推断数据类型
i = torch.tensor(1)
print(i,i.dtype)
x = torch.tensor(2.0)
print(x,x.dtype)
b = torch.tensor(True)
print(b,b.dtype)

# 指定数据类型

i = torch.tensor(1,dtype = torch.int32);print(i,i.dtype)
x = torch.tensor(2.0,dtype = torch.double);print(x,x.dtype)

i = torch.IntTensor(1);print(i.shape,i.dtype)  # changed: the post prints i (uninitialised memory)
x = torch.Tensor(np.array(2.0));print(x,x.dtype) # 等价于torch.FloatTensor
b = torch.BoolTensor(np.array([1,0,2,0])); print(b,b.dtype)

i = torch.tensor(1); print(i,i.dtype)
x = i.float(); print(x,x.dtype) #调用 float方法转换成浮点类型
y = i.type(torch.float); print(y,y.dtype) #使用type函数转换成浮点类型
z = i.type_as(x);print(z,z.dtype) #使用type_as方法转换成某个Tensor相同类型
