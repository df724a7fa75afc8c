# A librdkafka transactional producer (Debian's python3-confluent-kafka), for
# test/broker-librdkafka-txn.test.ts: commits, aborts, then commits again with
# one transactional id, each transaction's records produced and flushed
# before its end. Prints one line per step; exits non-zero on any error.
import sys
from confluent_kafka import Producer

bootstrap, topic = sys.argv[1], sys.argv[2]
producer = Producer({
    'bootstrap.servers': bootstrap,
    'transactional.id': 'py-librdkafka-tx',
    'enable.idempotence': True,
    'transaction.timeout.ms': 60000,
})
producer.init_transactions(60)
print('init', flush=True)
for name, count, commit in (('c1', 25, True), ('ab', 15, False), ('c2', 10, True)):
    producer.begin_transaction()
    for i in range(count):
        producer.produce(topic, key=f'{name}-{i}', value=f'{name}-{i}')
    producer.flush(60)
    if commit:
        producer.commit_transaction(60)
        print('committed', name, count, flush=True)
    else:
        producer.abort_transaction(60)
        print('aborted', name, count, flush=True)
