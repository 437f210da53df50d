#coding=utf-8
# Seed 001 (001_4cfcf2e30ddaa7d6.txt): backward() when no input requires grad raises
# ("没有可到变量的错误"): the script ends with torch's RuntimeError, as the post says it does.

# 如果调用backward的时候,所有的变量都是不可导的,那么最后会报出没有可到变量的错误
import torch
from torch import  autograd
input=torch.FloatTensor([1,2,3])
input_v=autograd.Variable(input,requires_grad=False)#False改为true才可行,不加requires_grad默认为false
loss=torch.mean(input_v)

print (loss.requires_grad)
loss.backward()
print( input_v)
print (input_v.grad)
