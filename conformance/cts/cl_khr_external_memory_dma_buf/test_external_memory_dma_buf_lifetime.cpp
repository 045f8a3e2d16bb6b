//
// cl_khr_external_memory: the import's lifetime rules -- who owns the fd,
// and that every way an application can come by a dma-buf fd (dup, dup2,
// dup3, another process over SCM_RIGHTS) imports the same memory.
//
#include <sys/socket.h>
#include <sys/uio.h>

#include "external_memory_dma_buf_common.h"

using namespace dma_buf_test;

namespace {

// Imports `import_fd` (ownership passes on success), then checks the import
// and the CPU view through `view_fd` see the same bytes both ways.
int check_same_memory(cl_context context, cl_command_queue queue,
                      const ExternalMemoryFunctions &fns, int import_fd,
                      int view_fd, size_t size, uint32_t seed)
{
    CpuView view(view_fd, size);
    test_assert_error(view.ok(), "mmap of the dma-buf failed");
    view.fill(seed);
    cl_int err = CL_SUCCESS;
    clMemWrapper mem = import_buffer(context, import_fd, size, &err);
    if (err != CL_SUCCESS) close(import_fd);
    test_error(err, "import");
    cl_mem m = mem;
    test_error(fns.acquire(queue, 1, &m, 0, nullptr, nullptr), "acquire");
    std::vector<uint8_t> seen(size);
    test_error(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, size, seen.data(), 0,
                                   nullptr, nullptr),
               "read");
    const auto next = expected_pattern(size, seed + 1);
    test_error(clEnqueueWriteBuffer(queue, mem, CL_TRUE, 0, size, next.data(),
                                    0, nullptr, nullptr),
               "write");
    test_error(fns.release(queue, 1, &m, 0, nullptr, nullptr), "release");
    test_error(clFinish(queue), "clFinish");
    test_assert_error(seen == expected_pattern(size, seed),
                      "the import did not read the dma-buf's bytes");
    test_assert_error(view.first_mismatch(seed + 1) == SIZE_MAX,
                      "the import's write is not in the dma-buf");
    return TEST_PASS;
}

} // namespace

// "importing memory from a file descriptor transfers ownership of the file
// descriptor from the application to the OpenCL implementation" -- the fd
// stays open while the object lives and is not left open once it is gone
// (the implementation disposes of what it owns).
REGISTER_TEST(external_memory_dma_buf_fd_ownership)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 4096);
    cl_int err = CL_SUCCESS;
    cl_mem mem = import_buffer(context, fd, 4096, &err);
    if (err != CL_SUCCESS) close(fd);
    test_error(err, "import");
    const bool open_while_alive = fd_is_open(fd);
    test_error(clReleaseMemObject(mem), "clReleaseMemObject");
    test_assert_error(open_while_alive, "the fd was closed while the import lives");
    test_assert_error(fd_closes_soon(fd),
                      "the implementation left the fd it owns open after the "
                      "object was released");
    return TEST_PASS;
}

// "The application must not perform any operations on the file descriptor
// after a successful import" holds only after a *successful* one: a refused
// import leaves the fd the application's, open and importable.
REGISTER_TEST(external_memory_dma_buf_failed_import_keeps_fd)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 4096);
    cl_int err = CL_SUCCESS;
    cl_mem bad = import_buffer(context, fd, 4096, &err,
                               CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR);
    if (bad) clReleaseMemObject(bad);
    test_assert_error(bad == nullptr && err != CL_SUCCESS,
                      "an import with CL_MEM_ALLOC_HOST_PTR was accepted");
    test_assert_error(fd_is_open(fd), "a failed import closed the fd");
    clMemWrapper good = import_buffer(context, fd, 4096, &err);
    if (err != CL_SUCCESS) close(fd);
    test_error(err, "the retry");
    return TEST_PASS;
}

// The same dma-buf imported twice (two fds of it): two objects over one
// memory, a write through one read through the other.
REGISTER_TEST(external_memory_dma_buf_import_twice)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    const size_t size = 8192;
    ALLOCATE_DMA_BUF(fd, size);
    const int second = dup(fd);
    test_assert_error(second >= 0, "dup");
    cl_int err = CL_SUCCESS;
    clMemWrapper a = import_buffer(context, fd, size, &err);
    if (err != CL_SUCCESS) close(fd), close(second);
    test_error(err, "first import");
    clMemWrapper b = import_buffer(context, second, size, &err);
    if (err != CL_SUCCESS) close(second);
    test_error(err, "second import");
    cl_mem both[2] = { a, b };
    test_error(fns.acquire(queue, 2, both, 0, nullptr, nullptr), "acquire");
    const auto data = expected_pattern(size, 30);
    test_error(clEnqueueWriteBuffer(queue, a, CL_TRUE, 0, size, data.data(), 0,
                                    nullptr, nullptr),
               "write through the first");
    test_error(fns.release(queue, 2, both, 0, nullptr, nullptr), "release");
    test_error(fns.acquire(queue, 2, both, 0, nullptr, nullptr), "acquire again");
    std::vector<uint8_t> seen(size);
    test_error(clEnqueueReadBuffer(queue, b, CL_TRUE, 0, size, seen.data(), 0,
                                   nullptr, nullptr),
               "read through the second");
    test_error(fns.release(queue, 2, both, 0, nullptr, nullptr), "release");
    test_error(clFinish(queue), "clFinish");
    test_assert_error(seen == data,
                      "the second import does not see the first's write");
    return TEST_PASS;
}

// An fd from dup(2): the same open file description, so the same dma-buf.
REGISTER_TEST(external_memory_dma_buf_import_after_dup)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 8192);
    const int copy = dup(fd);
    test_assert_error(copy >= 0, "dup");
    const int r = check_same_memory(context, queue, fns, copy, fd, 8192, 40);
    close(fd);
    return r;
}

// An fd from dup2(2), onto a number the application chose (here one it had
// open: dup2 closes it first).
REGISTER_TEST(external_memory_dma_buf_import_after_dup2)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 8192);
    int target = open("/dev/null", O_RDONLY | O_CLOEXEC);
    test_assert_error(target >= 0, "open /dev/null");
    test_assert_error(dup2(fd, target) == target, "dup2");
    const int r = check_same_memory(context, queue, fns, target, fd, 8192, 50);
    close(fd);
    return r;
}

// An fd from dup3(2) with O_CLOEXEC.
REGISTER_TEST(external_memory_dma_buf_import_after_dup3)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 8192);
    int target = open("/dev/null", O_RDONLY | O_CLOEXEC);
    test_assert_error(target >= 0, "open /dev/null");
    test_assert_error(dup3(fd, target, O_CLOEXEC) == target, "dup3");
    const int r = check_same_memory(context, queue, fns, target, fd, 8192, 60);
    close(fd);
    return r;
}

// An fd received over a Unix socket (SCM_RIGHTS), the way a compositor or a
// camera service hands a dma-buf to another process: a new fd of the same
// dma-buf in the receiver.
REGISTER_TEST(external_memory_dma_buf_import_after_scm_rights)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    ALLOCATE_DMA_BUF(fd, 8192);
    int pair[2];
    test_assert_error(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0,
                      "socketpair");
    char byte = 'x';
    iovec iov = { &byte, 1 };
    alignas(cmsghdr) char space[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = space;
    msg.msg_controllen = sizeof(space);
    cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
    const bool sent = sendmsg(pair[0], &msg, 0) == 1;
    msghdr in = {};
    char got_byte = 0;
    iovec in_iov = { &got_byte, 1 };
    alignas(cmsghdr) char in_space[CMSG_SPACE(sizeof(int))] = {};
    in.msg_iov = &in_iov;
    in.msg_iovlen = 1;
    in.msg_control = in_space;
    in.msg_controllen = sizeof(in_space);
    int received = -1;
    if (sent && recvmsg(pair[1], &in, MSG_CMSG_CLOEXEC) == 1)
    {
        cmsghdr *rc = CMSG_FIRSTHDR(&in);
        if (rc && rc->cmsg_type == SCM_RIGHTS)
            memcpy(&received, CMSG_DATA(rc), sizeof(int));
    }
    close(pair[0]);
    close(pair[1]);
    test_assert_error(received >= 0 && received != fd,
                      "no fd came over the socket");
    const int r = check_same_memory(context, queue, fns, received, fd, 8192, 70);
    close(fd);
    return r;
}

// The import keeps its memory when the application closes every fd it had
// of the dma-buf: "It owns a reference to the underlying memory resource".
REGISTER_TEST(external_memory_dma_buf_outlives_application_fds)
{
    REQUIRE_DMA_BUF_IMPORT(fns);
    const size_t size = 8192;
    ALLOCATE_DMA_BUF(fd, size);
    const int keep = dup(fd);
    CpuView(keep, size).fill(80);
    cl_int err = CL_SUCCESS;
    clMemWrapper mem = import_buffer(context, fd, size, &err);
    if (err != CL_SUCCESS) close(fd);
    close(keep); // no fd of the dma-buf left with the application
    test_error(err, "import");
    cl_mem m = mem;
    test_error(fns.acquire(queue, 1, &m, 0, nullptr, nullptr), "acquire");
    std::vector<uint8_t> seen(size);
    test_error(clEnqueueReadBuffer(queue, mem, CL_TRUE, 0, size, seen.data(), 0,
                                   nullptr, nullptr),
               "read");
    test_error(fns.release(queue, 1, &m, 0, nullptr, nullptr), "release");
    test_error(clFinish(queue), "clFinish");
    test_assert_error(seen == expected_pattern(size, 80),
                      "the import lost its memory with the application's fds");
    return TEST_PASS;
}
