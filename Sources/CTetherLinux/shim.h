// Linux kernel interfaces that Glibc's Swift module does not export:
// epoll and eventfd for the event loop, rtnetlink for the path monitor.
#ifndef CTETHERLINUX_SHIM_H
#define CTETHERLINUX_SHIM_H
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if.h>
#include <linux/if_arp.h>
#endif
