// A limit changed INSIDE the program (prlimit64 of another process of the program, or
// setrlimit by a thread whose table is its own) between the decision of a dup of a process
// alone on its table and that call's run in the kernel (red team, round 15). Each round a
// fresh process churns OP for 20 ms while the limit drops from 70 to 40 at a random moment,
// then compares F_GETFD (the library) with F_GETFL (the kernel) on the number.
// usage: probe_limit_inside p|f|t ROUNDS OP
//   p: the parent lowers the child's limit; f: one thread of the parent lowers it and another
//   sets it back at once; t: a thread of the child that unshared its table lowers it
// A refused call whose number F_GETFD then says is open counts too.
//   OP 0 dup2(1,50), 1 F_DUPFD(1,50), 2 dup(0) with 0..39 open, 3 dup3(1,50,O_CLOEXEC)
// Prints "rounds N bad 0" natively.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
static volatile int go, done;
static int setlim(pid_t pid, long v){struct rlimit r={v,4096};return prlimit(pid,RLIMIT_NOFILE,&r,NULL);}
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
// returns 1 if at the end the library and kernel disagree on 50
static int op;
static int churn(double dur){
  if(op==2) for(int i=3;i<40;i++) if(fcntl(i,F_GETFL)<0) dup2(0,i);
  int T= op==2?40:50;
  double end=now()+dur; long bad=0;
  while(now()<end){
    int r= op==0?dup2(1,50): op==1? fcntl(1,F_DUPFD,50): op==2? dup(0): dup3(1,50,O_CLOEXEC);
    if(r>=0) close(r);
    else if(fcntl(T,F_GETFD)>=0 && fcntl(T,F_GETFL)<0) bad++; /* refused, yet open */
  }
  int g=fcntl(T,F_GETFD), gl=fcntl(T,F_GETFL);
  int c=close(T); int ce=errno;
  int d=dup(0); // natively lowest free
  if(bad) { printf("op %d: %ld refused calls left %d open\n",op,bad,T); return 1; }
  if((g>=0)!=(gl>=0)) { printf("END op %d: F_GETFD(%d)=%d F_GETFL=%d close=%d(%s) dup(0)=%d\n",op,T,g,gl,c,c<0?strerror(ce):"",d); return 1;}
  close(d);
  return 0;
}
static pid_t target; static volatile int lowered;
static void *lower(void*a){ setlim(target,40); lowered=1; return 0; }
static void *thr(void*a){ unshare(CLONE_FILES); while(!go); int r=churn(0.02); done=1; return (void*)(long)r;}
int main(int c,char**v){
  char how=v[1][0]; int rounds=atoi(v[2]); op=atoi(v[3]); int bad=0;
  setvbuf(stdout,0,_IOLBF,0);
  srand(getpid());
  for(int k=0;k<rounds;k++){
    if(how=='p'||how=='f'){
      setlim(0,70);
      int p[2]; pipe(p);
      pid_t q=fork();
      if(!q){ close(p[1]); char b; read(p[0],&b,1); _exit(churn(0.02)); }
      close(p[0]); write(p[1],"x",1); close(p[1]);
      double t=now()+ (rand()%10000)/1e6; while(now()<t);
      if(how=='p'){ setlim(q,40); close(999); }
      else { /* one thread lowers the limit, another sets it back: two traced calls */
        target=q; lowered=0; pthread_t t; pthread_create(&t,0,lower,0);
        while(!lowered)
          ;
        setlim(q,70);
        pthread_join(t,0);
      }
      int st; waitpid(q,&st,0); if(WEXITSTATUS(st)) bad++;
    } else {
      // a fresh process per round, so that no earlier change was seen
      pid_t q=fork();
      if(!q){
        setlim(0,70); go=0; done=0;
        pthread_t t; pthread_create(&t,0,thr,0);
        go=1;
        double tt=now()+(rand()%10000)/1e6; while(now()<tt);
        setlim(0,40); close(999);
        void *r; pthread_join(t,&r); _exit((long)r);
      }
      int st; waitpid(q,&st,0); if(WEXITSTATUS(st)) bad++;
    }
  }
  printf("rounds %d bad %d\n",rounds,bad);
  return 0;
}
