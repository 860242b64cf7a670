# stdin: '4\n'
n = int(input())
for i in range(1, n + 1):
    print(i * i)
print('done')
