// Descriptors received while an untraced process had raised the program's limit, lowered
// again before the program's next call (red team, round 15):
// probe_recv_limit q SOCK: the program: limit 40, 0..37 open, blocks in recvmsg on a Unix
//                          socket, then reports the numbers it received (38..41), closes
//                          them and opens one more (38 natively).
// probe_recv_limit h SOCK: the untraced helper: raises the program's limit to 70, sends 4
//                          descriptors, lowers it back to 40 while the program makes no call.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/resource.h>
static int setlim(pid_t pid, long v){struct rlimit r={v,4096};return prlimit(pid,RLIMIT_NOFILE,&r,NULL);}
int main(int c, char **v){
  struct sockaddr_un a={AF_UNIX}; strcpy(a.sun_path,v[2]);
  setvbuf(stdout,0,_IONBF,0);
  if(v[1][0]=='h'){
    unlink(v[2]); int l=socket(AF_UNIX,SOCK_STREAM,0); bind(l,(void*)&a,sizeof a); listen(l,1);
    int s=accept(l,0,0); pid_t q; read(s,&q,sizeof q); usleep(100000);
    setlim(q,70);
    int fds[4]={0,1,2,0}; char cb[CMSG_SPACE(4*sizeof(int))]; struct iovec io={"x",1};
    struct msghdr m={0}; m.msg_iov=&io; m.msg_iovlen=1; m.msg_control=cb; m.msg_controllen=sizeof cb;
    struct cmsghdr *ch=CMSG_FIRSTHDR(&m); ch->cmsg_level=SOL_SOCKET; ch->cmsg_type=SCM_RIGHTS; ch->cmsg_len=CMSG_LEN(4*sizeof(int)); memcpy(CMSG_DATA(ch),fds,sizeof fds);
    sendmsg(s,&m,0); usleep(5000); setlim(q,40);
    usleep(300000); unlink(v[2]); return 0;
  }
  int s=socket(AF_UNIX,SOCK_STREAM,0);
  while(connect(s,(void*)&a,sizeof a)<0) usleep(10000);
  setlim(0,40);
  for(int i=0;i<38;i++) if(fcntl(i,F_GETFL)<0) dup2(0,i);
  pid_t me=getpid(); write(s,&me,sizeof me);
  char b[1]; struct iovec io={b,1}; char cb[CMSG_SPACE(4*sizeof(int))];
  struct msghdr m={0}; m.msg_iov=&io; m.msg_iovlen=1; m.msg_control=cb; m.msg_controllen=sizeof cb;
  int r=recvmsg(s,&m,0);
  usleep(50000);
  int n=0; int got[4]={-1,-1,-1,-1};
  struct cmsghdr *ch=CMSG_FIRSTHDR(&m); if(ch&&ch->cmsg_type==SCM_RIGHTS){ n=(ch->cmsg_len-CMSG_LEN(0))/sizeof(int); memcpy(got,CMSG_DATA(ch),n*sizeof(int)); }
  printf("recvmsg=%d flags=%#x received %d: %d %d %d %d\n",r,m.msg_flags,n,got[0],got[1],got[2],got[3]);
  for(int i=38;i<43;i++) printf("  %d: F_GETFD %d, F_GETFL %s\n",i,fcntl(i,F_GETFD),fcntl(i,F_GETFL)>=0?"open":"EBADF");
  for(int i=0;i<n;i++) printf("  close(%d) = %d\n",got[i],close(got[i]));
  setlim(0,100);
  int d=open("/dev/null",O_RDONLY); printf("next open = %d (F_GETFL(40) %s)\n",d,fcntl(40,F_GETFL)>=0?"open":"EBADF");
  return 0;
}
