%% The Erlang anchor of luarun's benchmark harness (bench/erlang.go runs
%% it: erl -noshell -run anchor main KIND ARGS...). Each kind prints its
%% figure and halts:
%%   ring N M     N processes pass a token M hops: ns per hop
%%   pingpong M   two processes, M round trips after 1,000: ns per message
%%   spawn N      N processes, each until it waits in receive:
%%                {ns per spawn, bytes per process of erlang:memory(processes)}
%%   idle N       N processes waiting in receive: the VM's VmRSS in KB
%%   million N    bench/million.lua: N processes started until each waits
%%                in receive, then each messaged once and heard back from:
%%                {start ns, start CPU ns, message ns, message CPU ns,
%%                 VmHWM KB}; CPU is user + system of the OS process
-module(anchor).
-export([main/1]).

main([K | Args]) ->
    Kind = list_to_atom(K),
    Ns = [list_to_integer(A) || A <- Args],
    io:format("~p~n", [run(Kind, Ns)]),
    halt().

run(ring, [N, M]) ->
    Self = self(),
    First = lists:foldl(fun(_, Next) -> spawn(fun() -> node(Next, Self) end) end, Self, lists:seq(1, N - 1)),
    T0 = erlang:monotonic_time(nanosecond),
    First ! M,
    last_node(First),
    (erlang:monotonic_time(nanosecond) - T0) / M;
run(pingpong, [M]) ->
    P = spawn(fun pong/0),
    ping(P, 1000),
    T0 = erlang:monotonic_time(nanosecond),
    ping(P, M),
    (erlang:monotonic_time(nanosecond) - T0) / (2 * M);
run(spawn, [N]) ->
    erlang:garbage_collect(),
    Before = erlang:memory(processes),
    T0 = erlang:monotonic_time(nanosecond),
    Ps = idle(N),
    T = (erlang:monotonic_time(nanosecond) - T0) / N,
    Mem = (erlang:memory(processes) - Before) / N,
    [P ! stop || P <- Ps],
    {T, Mem};
run(million, [N]) ->
    Me = self(),
    T0 = erlang:monotonic_time(nanosecond), C0 = cpu_ns(),
    Ps = [spawn(fun() -> Me ! true, receive M -> Me ! M end end) || _ <- lists:seq(1, N)],
    hear(true, N),
    T1 = erlang:monotonic_time(nanosecond), C1 = cpu_ns(),
    [P ! hello || P <- Ps],
    hear(hello, N),
    T2 = erlang:monotonic_time(nanosecond), C2 = cpu_ns(),
    {T1 - T0, C1 - C0, T2 - T1, C2 - C1, status_kb("VmHWM")};
run(idle, [N]) ->
    idle(N),
    {ok, Status} = file:read_file("/proc/self/status"),
    {match, [Kb]} = re:run(Status, "VmRSS:\\s*(\\d+)", [{capture, all_but_first, list}]),
    list_to_integer(Kb).

%% idle starts N processes and returns once each waits in receive.
idle(N) ->
    Ps = [spawn(fun() -> receive stop -> ok end end) || _ <- lists:seq(1, N)],
    lists:foreach(fun wait_waiting/1, Ps),
    Ps.

node(Next, Main) ->
    receive
        0 -> Main ! done;
        K -> Next ! K - 1, node(Next, Main)
    end.

%% the calling process is the ring's last node
last_node(First) ->
    receive
        done -> ok;
        0 -> ok;
        K -> First ! K - 1, last_node(First)
    end.

ping(_, 0) -> ok;
ping(P, M) -> P ! {self(), M}, receive M -> ping(P, M - 1) end.

pong() ->
    receive {From, M} -> From ! M, pong() end.

wait_waiting(P) ->
    case erlang:process_info(P, status) of
        {status, waiting} -> ok;
        _ -> erlang:yield(), wait_waiting(P)
    end.

hear(_, 0) -> ok;
hear(M, K) -> receive M -> hear(M, K - 1) end.

%% cpu_ns is the OS process's user + system time (/proc/self/stat, in
%% clock ticks of 10 ms), as the luarun side reads it.
cpu_ns() ->
    {ok, Stat} = file:read_file("/proc/self/stat"),
    [_, Rest] = binary:split(Stat, <<") ">>),
    Fields = binary:split(Rest, <<" ">>, [global]),
    (binary_to_integer(lists:nth(12, Fields)) + binary_to_integer(lists:nth(13, Fields))) * 10000000.

status_kb(Name) ->
    {ok, Status} = file:read_file("/proc/self/status"),
    {match, [Kb]} = re:run(Status, Name ++ ":\\s*(\\d+)", [{capture, all_but_first, list}]),
    list_to_integer(Kb).
