/* drivers/dma-buf/sw_sync.c's ioctls (not in the exported uapi headers). */
#pragma once

#include <linux/types.h>
#include <sys/ioctl.h>

struct vgen9_sw_sync_create_fence_data {
    __u32 value;
    char name[32];
    __s32 fence;
};
#define VGEN9_SW_SYNC_IOC_CREATE_FENCE _IOWR('W', 0, struct vgen9_sw_sync_create_fence_data)
#define VGEN9_SW_SYNC_IOC_INC _IOW('W', 1, __u32)
