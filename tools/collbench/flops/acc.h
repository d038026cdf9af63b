/* acc.h - accumulator list macros of the flops kernels (X(k) for each k). */
#ifndef CBT_FLOPS_ACC_H
#define CBT_FLOPS_ACC_H
#define CBT_ACC8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define CBT_ACC10(X) CBT_ACC8(X) X(8) X(9)
#define CBT_ACC16(X) CBT_ACC10(X) X(10) X(11) X(12) X(13) X(14) X(15)
#endif
